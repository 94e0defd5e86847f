"""The run's offline roll-up (`jobs.engine.offline_rollup.offline_rollup`): the pyarrow read of
the run's `partition_windows` files, clipped to the run's period, per topic and cause broker."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.engine.offline_rollup import (
    Rollup,
    Window,
    arrow_sums,
    offline_rollup,
    window_sums,
)
from jobs.store.tables import WRITE_OPTIONS, file_schema

S = 1_000_000  # microseconds per second


def at(second: int | None) -> datetime | None:
    return None if second is None else datetime.fromtimestamp(second, UTC)


def window(cluster: str, topic: str, kind: str, start: int | None, end: int | None,
           cause: int | None) -> dict[str, Any]:
    row: dict[str, Any] = {name: None for name in file_schema("partition_windows").names}
    row.update(cluster=cluster, topic=topic, partition=0, kind=kind, start_ts=at(start),
               end_ts=at(end), cause_broker=cause)
    return row


def write_windows(out: Path, run_id: str, rows: list[dict[str, Any]], name: str) -> None:
    partition = out / "partition_windows" / f"run_id={run_id}"
    partition.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=file_schema("partition_windows"))
    pq.write_table(table, partition / name, **WRITE_OPTIONS)



def test_windows_are_clipped_to_the_period_per_topic_and_cause(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_windows(out, "r1", [
        window("east", "a", "offline", 100, 160, 2),  # inside the period: 60 s
        window("east", "a", "offline", 50, 130, 2),  # starts before the period: 30 s
        window("east", "b", "offline", 150, None, None),  # open: up to the end, 50 s
        window("east", "b", "offline", 300, 400, 3),  # after the period's end: 0 s
        window("east", "b", "under_min_isr", 100, 200, 2),  # not offline
        window("west", "c", "offline", 10, 20, 1),  # no period start: the log's start
        window("north", "d", "offline", 10, 20, 1),  # a cluster without a period end
    ], "part-0.parquet")
    write_windows(out, "r1", [window("east", "a", "offline", 100, 200, 4)], "_hidden.parquet")
    write_windows(out, "r0", [window("east", "a", "offline", 100, 200, 4)], "part-0.parquet")
    starts, ends = {"east": 100 * S}, {"east": 200 * S, "west": 30 * S, "gone": -1}
    fast = offline_rollup(str(out), "r1", starts, ends)
    assert fast["east"].by_topic == {"a": 90.0, "b": 50.0}
    assert fast["east"].by_cause_broker == {"2": 90.0, "3": 0.0, "none": 50.0}
    assert fast["east"].seconds == 140.0
    assert fast["west"] == Rollup(30 * S, 10.0, {"c": 10.0}, {"1": 10.0})
    assert set(fast) == {"east", "west"}


def test_a_run_without_windows_rolls_up_to_zero(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_windows(out, "r0", [window("east", "a", "offline", 1, 2, 1)], "part-0.parquet")
    assert offline_rollup(str(out), "r1", {}, {"east": 5 * S}) == {"east": Rollup(5 * S)}


def test_the_period_is_kept_and_a_cluster_without_times_has_an_empty_one(
        tmp_path: Path) -> None:
    """`run_summary` records each cluster's period for the audit's post-mortem: a cluster
    whose rows carried no time covers nothing, its open window included."""
    out = tmp_path / "out"
    write_windows(out, "r1", [window("east", "a", "offline", 50, None, 2)], "part-0.parquet")
    fast = offline_rollup(str(out), "r1", {"east": 100 * S, "west": 7 * S},
                          {"east": -1, "west": 30 * S})
    assert fast["east"] == Rollup(100 * S, 0.0, {"a": 0.0}, {"2": 0.0}, period_start_us=100 * S)
    assert (fast["west"].period_start_us, fast["west"].period_end_us) == (7 * S, 30 * S)


def test_the_streamed_sums_are_the_python_fold_s_in_its_order(tmp_path: Path) -> None:
    """The driver streams the run's windows through pyarrow compute, batch by batch; it sums
    as `window_sums` (the KRaft fold's Python roll-up) does, each roll-up's keys in their
    first window's order, so that the float totals over them agree too."""
    out = tmp_path / "out"
    cases = [(s, e, c) for s in (None, 40, 100, 250) for e in (None, 60, 150, 300)
             for c in (None, 1, 2)]
    files = [[window(cluster, f"t{(i * 7 + n) % 5}", "offline", s, e, c)
              for i, (s, e, c) in enumerate(cases)] for n, cluster in enumerate(
                  ("east", "west", "east", "north"))]
    for n, rows in enumerate(files):
        write_windows(out, "r1", rows, f"part-{n}.parquet")
    starts, ends = {"east": 100 * S}, {"east": 200 * S, "west": 90 * S}
    rollups = {c: Rollup(t) for c, t in ends.items()}
    windows = [Window(r["cluster"], r["topic"], r["cause_broker"], *(
        None if r[k] is None else int(r[k].timestamp()) * S for k in ("start_ts", "end_ts")))
        for rows in files for r in rows]
    streamed = arrow_sums(str(out), "r1", starts, rollups)
    folded = window_sums(windows, starts, rollups)
    for attr in ("by_topic", "by_cause_broker"):
        assert [s for s in streamed if s[0] == attr] == [s for s in folded if s[0] == attr]
    assert {cluster for _, cluster, _, _ in streamed} == {"east", "west"}
    assert sum(us for attr, *_, us in streamed if attr == "by_topic") > 0
