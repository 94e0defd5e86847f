"""The roll-ups of a large run on the executors (`jobs.engine.incidents_query`,
`jobs.engine.changes_query`) give what the driver's reads give on the same committed
tables: the incidents, the carry after the run, and the counts and first rows of the
creations and leader moves, on random rows of two clusters with an earlier run's carry."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.engine import changes_table
from jobs.engine.changes_query import counted_on_executors, leaders_after_on_executors
from jobs.engine.incidents_query import incidents_on_executors
from jobs.engine.incidents_table import read_elections, read_windows, run_incidents
from jobs.engine.rollup_carry import (
    LEADER_CAUSES,
    Carry,
    carry_after,
    last_leader_writes,
    run_leader_writes,
)
from jobs.store.tables import WRITE_OPTIONS, file_schema
from schemas import event_types as ET
from statemachine.incidents import Election
from statemachine.rows import PartitionWindowRow

pytestmark = pytest.mark.spark

RUN = "r2"
S = 1_000_000
CLUSTERS = ("c1", "caf\u00e9")


def _file(out: Path, table: str, rows: list[dict[str, Any]]) -> None:
    """`rows` as the run's file of `table` (times given as microseconds)."""
    partition = out / table / f"run_id={RUN}"
    partition.mkdir(parents=True, exist_ok=True)
    schema = file_schema(table)
    columns = {}
    for f in schema:
        values = [r.get(f.name) for r in rows]
        columns[f.name] = pa.array(values, pa.int64()).cast(f.type) \
            if pa.types.is_timestamp(f.type) else pa.array(values, f.type)
    pq.write_table(pa.table(columns, schema=schema), partition / "part-0.parquet",
                   **WRITE_OPTIONS)


def _writes(rng: random.Random) -> tuple[list[dict[str, Any]], pa.Table]:
    """The run's partition state writes (seqs 20-59) and the earlier runs' last
    leader-setting write per partition (seqs below 20), as the carry holds them."""
    def write(seq: int, n: int) -> dict[str, Any]:
        return {"cluster": rng.choice(CLUSTERS), "topic": rng.choice(["a", "b", "c"]),
                "partition": rng.randrange(3), "seq": seq, "write": n, "ts": seq * S,
                "leader": rng.choice([-1, 0, 1, 2, 3]),
                "cause": rng.choice(["election", "initialization", "isr_shrink",
                                     "isr_change"])}
    earlier = [write(rng.randrange(20), 0) for _ in range(40)]
    mine = [write(seq, n) for seq in range(20, 60) for n in range(rng.randrange(1, 4))]
    unique = {(w["cluster"], w["topic"], w["partition"], w["seq"], w["write"]): w
              for w in mine}
    before = pa.Table.from_pylist([{**w, "cause": None} for w in earlier])
    return list(unique.values()), last_leader_writes([before])


def _creations(rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    for cluster in CLUSTERS:
        for topic in ("a", "b", "c", "d"):
            for partition in range(rng.randrange(1, 5)):
                seq = rng.choice([3, 3, 7, 9]) if partition or topic != "d" else 11
                rows.append({"cluster": cluster, "seq": seq, "ts": seq * S, "step": 0,
                             "topic": topic, "partition": partition, "machine": "partition",
                             "from_state": "NonExistentPartition", "to_state": "NewPartition",
                             "outcome": "applied"})
    rows.append({**rows[0], "outcome": "rejected"})
    return rows


def _window(rng: random.Random, cluster: str) -> dict[str, Any]:
    start = rng.randrange(1, 30)
    end = rng.choice([None, start + rng.randrange(1, 20)])
    return {"cluster": cluster, "topic": rng.choice(["a", "b", "c"]),
            "partition": rng.randrange(2),
            "kind": rng.choice(["offline", "under_min_isr", "under_replicated"]),
            "start_seq": start, "start_ts": start * S, "end_seq": end,
            "end_ts": None if end is None else end * S, "seconds": None,
            "cause_event": ET.BROKER_FAILURE, "cause_broker": rng.randrange(3),
            "end_event": None if end is None else ET.BROKER_STARTUP, "end_broker": None,
            "incident_id": rng.choice([start, None])}


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Carry]:
    rng = random.Random(7)
    out = tmp_path_factory.mktemp("rollups") / "out"
    writes, leaders = _writes(rng)
    _file(out, "partition_state_writes", writes)
    _file(out, "state_changes", _creations(rng))
    windows = [_window(rng, rng.choice(CLUSTERS)) for _ in range(120)]
    _file(out, "partition_windows", windows)
    _file(out, "findings", [{"cluster": "c1", "seq": s, "topic": "a", "partition": 0,
                             "kind": "unclean_leader_election"} for s in (4, 12, 25)])
    # The earlier runs' open windows: some the run closes, others it does not touch.
    carried = [(w["cluster"], PartitionWindowRow(
        *({**w, "end_seq": None, "end_ts": None, "end_event": None}[f]
          for f in PartitionWindowRow._fields)))
        for w in windows[:15] + [_window(rng, "c1") for _ in range(10)]]
    elections = [("c1", Election(2, "b", 1))]
    return out, Carry(carried, elections, [], leaders)


def test_the_incidents_and_the_carry_are_the_drivers(spark: Any,
                                                     output: tuple[Path, Carry]) -> None:
    out, carry = output
    elections = [*carry.elections, *read_elections(str(out), [RUN])]
    as_of: dict[str, int | None] = {"c1": 80 * S}  # the other cluster: no period in the run
    reads = [(c, "", w) for c, w in carry.windows] + read_windows(str(out), [RUN])
    want = run_incidents(reads, elections, RUN, as_of)
    found, still_open = incidents_on_executors(spark, str(out), RUN, carry.windows,
                                               elections, as_of)
    assert found == want and len(want["c1"]) > 3
    want_carry = carry_after(carry, str(out), RUN, reads, elections)
    got_carry = carry_after(carry, str(out), RUN, [(c, "", w) for c, w in still_open],
                            elections)
    assert got_carry.windows == want_carry.windows
    assert got_carry.elections == want_carry.elections
    assert {c for c, _ in still_open} == set(CLUSTERS)


def test_the_creations_and_leader_moves_are_the_drivers(spark: Any,
                                                        output: tuple[Path, Carry]) -> None:
    out, carry = output
    want = changes_table._counted_on_driver(str(out), RUN, carry)
    got = counted_on_executors(spark, str(out), RUN, carry.leaders, LEADER_CAUSES)
    assert got == {c: want[c] for c in sorted(want)}
    assert all(c.count > 0 for changes in got.values() for c in changes)
    # Without the carry, the first writes of the run have nothing before them.
    alone = counted_on_executors(spark, str(out), RUN, Carry().leaders, LEADER_CAUSES)
    assert alone == changes_table._counted_on_driver(str(out), RUN, Carry())


def test_the_leader_writes_carried_after_the_run_are_the_drivers(
        spark: Any, output: tuple[Path, Carry]) -> None:
    out, carry = output
    want = last_leader_writes([carry.leaders, run_leader_writes(str(out), RUN)])
    got = leaders_after_on_executors(spark, str(out), RUN, carry.leaders, LEADER_CAUSES)
    assert got.cast(want.schema).to_pylist() == want.to_pylist()
    assert 10 < got.num_rows < len(run_leader_writes(str(out), RUN))
