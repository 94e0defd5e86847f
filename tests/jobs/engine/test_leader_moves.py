"""`leader_moved` on Arrow columns (`jobs.engine.leader_moves`) is the Python definition
(`jobs.engine.change_digest.leaders_moved`), count and first rows, whatever the writes."""

from __future__ import annotations

import random

import pyarrow as pa

from jobs.engine.change_digest import Write, leaders_moved
from jobs.engine.leader_moves import COLUMNS, leader_moves

RUN = "r2"


def as_table(writes: list[tuple[str, Write]]) -> pa.Table:
    """(cluster, write) pairs, the earlier runs' first as `changes_table` lays them."""
    rows = sorted(writes, key=lambda cw: cw[1][0] == RUN)
    columns = {name: [] for name in COLUMNS}  # type: dict[str, list[object]]
    for cluster, (run, seq, write, ts, topic, partition, leader, cause) in rows:
        for name, value in zip(COLUMNS, (cluster, topic, partition, seq, write, ts, leader,
                                         run == RUN, cause), strict=True):
            columns[name].append(value)
    types = [pa.string(), pa.string(), pa.int32(), pa.int64(), pa.int32(), pa.int64(),
             pa.int32(), pa.bool_(), pa.string()]
    return pa.table([pa.array(columns[n], t) for n, t in zip(COLUMNS, types, strict=True)],
                    names=list(COLUMNS))


def random_writes(rng: random.Random, n: int) -> list[tuple[str, Write]]:
    """Writes of two clusters; one write per (cluster, topic, partition, seq, write), as
    a run writes them, and the earlier runs' before the run's."""
    out: dict[tuple[object, ...], tuple[str, Write]] = {}
    for _ in range(n):
        run = rng.choice(["", RUN])
        seq = rng.randrange(20) + (0 if run == "" else 20)
        cluster, topic, partition = (rng.choice(["c1", "c2"]),
                                     rng.choice(["a", "b", "caf\u00e9"]), rng.randrange(3))
        write = (run, seq, rng.randrange(3), seq * 10, topic, partition,
                 rng.choice([-1, 0, 1, 2, 3]),
                 rng.choice(["election", "initialization", "isr_shrink"]) if run else "")
        out[(cluster, topic, partition, seq, write[2])] = (cluster, write)
    return list(out.values())


def test_the_columns_find_the_moves_the_python_rows_find() -> None:
    rng = random.Random(5)
    for n in (0, 1, 7, 60, 400):
        writes = random_writes(rng, n)
        got = leader_moves(as_table(writes))
        for cluster in ("c1", "c2"):
            want = leaders_moved([w for c, w in writes if c == cluster], RUN)
            mine = got.get(cluster)
            assert (mine.count, mine.first) == (want.count, want.first) if mine \
                else want.count == 0
    assert sum(c.count for c in leader_moves(as_table(random_writes(rng, 400))).values()) > 0
