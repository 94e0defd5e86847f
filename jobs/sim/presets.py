"""Named sizes of a simulated log. Counts are targets: the log stops at the first controller
event at or past `events` good rows, and topic creation is steered to reach `partitions`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Preset:
    name: str
    brokers: int
    events: int  # good rows to emit (bad rows come on top)
    partitions: int  # partitions to create over the log
    stories: int  # broker/controller stories (crash, rolling restart, failover, ...)
    mean_gap_ms: float  # mean time between controller events
    # Per-tick probabilities of the rarer filler actions.
    p_reassign: float = 0.002
    p_delete: float = 0.0005
    p_grow: float = 0.001
    p_config: float = 0.0005
    p_preferred: float = 0.0005
    p_unclean: float = 0.001
    # Ticks (filler steps) a follower stays out of the ISR after a flap, and the spread of
    # catch-ups after a broker comes back.
    flap_ticks: tuple[int, int] = (5, 200)
    restart_ticks: tuple[int, int] = (50, 400)
    catchup_ticks: int = 300
    max_topic_partitions: int = 2000
    scripted: bool = False  # run the stories in a fixed order (covers every flow)
    rows_per_file: int = 250_000


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "tiny",
            brokers=4,
            events=400,
            partitions=24,
            stories=4,
            mean_gap_ms=2000,
            p_reassign=0.02,
            p_delete=0.01,
            p_grow=0.01,
            p_config=0.01,
            p_preferred=0.01,
            p_unclean=0.02,
            flap_ticks=(2, 15),
            restart_ticks=(10, 30),
            catchup_ticks=10,
            max_topic_partitions=8,
            scripted=True,
            rows_per_file=100,
        ),
        Preset(
            "sample",
            brokers=6,
            events=6_000,
            partitions=300,
            stories=6,
            mean_gap_ms=1000,
            p_reassign=0.004,
            p_delete=0.001,
            p_grow=0.002,
            p_config=0.002,
            p_preferred=0.002,
            p_unclean=0.005,
            flap_ticks=(5, 100),
            restart_ticks=(30, 200),
            catchup_ticks=100,
            max_topic_partitions=64,
            scripted=True,
            rows_per_file=5_000,
        ),
        Preset(
            "bench",
            brokers=12,
            events=1_000_000,
            partitions=100_000,
            stories=10,
            mean_gap_ms=80,
            catchup_ticks=5_000,
            restart_ticks=(500, 3_000),
            flap_ticks=(20, 2_000),
        ),
        Preset(
            "large",
            brokers=30,
            events=10_000_000,
            partitions=1_000_000,
            stories=24,
            mean_gap_ms=8,
            catchup_ticks=20_000,
            restart_ticks=(2_000, 10_000),
            flap_ticks=(20, 5_000),
        ),
    )
}
