"""Rows that break the input contract (the bad input the replay quarantines or counts as
duplicates, docs/tables.md), mixed into a simulated log on request.

They come from their own random stream, so the good rows of a log are the same with and
without bad rows. Every bad row except an exact duplicate says what it is in `source`
(`sim:bad:<kind>`); duplicates are exact copies and are counted instead.
"""

from __future__ import annotations

import random

from jobs.sim.writer import Row

KINDS = (
    "duplicate",
    "null_seq",
    "null_ts",
    "null_event_type",
    "unknown_type",
    "negative_replica",
    "duplicate_replica",
    "missing_field",
)
# Column positions in EVENT_COLUMNS.
SEQ, TS, ET, BROKER, TOPIC, PART, REPLICAS, ISR, SOURCE = 1, 2, 3, 4, 5, 6, 7, 8, 13


class BadRows:
    def __init__(self, seed: int, rate: float) -> None:
        self.rng = random.Random(f"bad-rows-{seed}")
        self.rate = rate
        self.counts: dict[str, int] = dict.fromkeys(KINDS, 0)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def rows_for(self, group: list[Row]) -> list[Row]:
        """Bad rows to add to one controller event's rows (about `rate` per good row)."""
        rng = self.rng
        out: list[Row] = []
        for row in group:
            if rng.random() >= self.rate:
                continue
            kind = rng.choice(KINDS)
            self.counts[kind] += 1
            if kind == "duplicate":
                out.append(row)
                continue
            bad = list(row)
            bad[SOURCE] = f"sim:bad:{kind}"
            if kind == "null_seq":
                bad[SEQ] = None
            elif kind == "null_ts":
                bad[TS] = None
            elif kind == "null_event_type":
                bad[ET] = None
            elif kind == "unknown_type":
                bad[ET] = rng.choice(("LeaderMoved", "BrokerRestarted", "isr_changed", ""))
            elif kind in ("negative_replica", "duplicate_replica"):
                b = rng.randint(1, 9)
                bad[ET] = "PartitionCreated"
                bad[TOPIC] = bad[TOPIC] or "bad-topic"
                bad[PART] = bad[PART] if bad[PART] is not None else 0
                bad[REPLICAS] = (-1, b) if kind == "negative_replica" else (b, b)
            else:  # missing_field: a partition event without its partition or ISR
                bad[ET] = "IsrChanged"
                bad[TOPIC] = bad[TOPIC] or "bad-topic"
                bad[PART] = None
                bad[ISR] = None
            out.append(tuple(bad))
        return out
