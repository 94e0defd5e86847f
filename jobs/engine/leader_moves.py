"""The `leader_moved` change of a run, computed on Arrow columns: each `election` write of
the run against the same partition's write before it (any run; any cause but `isr_change`,
which never changes the leader), as `jobs.engine.change_digest.leaders_moved` defines it
on Python rows.

The run's leader-setting writes of the elected topics are one per election and more (the
bench log's run: 193,149 elections), so they stay columns: sorted, compared with the row
before, filtered; only the count and the first `FIRST` moves become Python values. As
tuples they added about 400 MB to the driver.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from jobs.engine.change_digest import Change
from jobs.engine.requested import FIRST

PARTITION = ("cluster", "topic", "partition")
COLUMNS = (*PARTITION, "seq", "write", "ts", "leader", "own", "cause")


def _previous(column: pa.ChunkedArray) -> pa.Array:
    """The column shifted down by one row (null first)."""
    values = column.combine_chunks()
    return pa.concat_arrays([pa.nulls(1, values.type), values.slice(0, len(values) - 1)])


def _same_as_previous(table: pa.Table, names: tuple[str, ...]) -> pa.Array:
    same = None
    for name in names:
        equal = pc.fill_null(pc.equal(table.column(name), _previous(table.column(name))),
                             False)
        same = equal if same is None else pc.and_(same, equal)
    assert same is not None
    return same


def leader_moves(writes: pa.Table) -> dict[str, Change]:
    """Per cluster with one, its `leader_moved` change. `writes`: COLUMNS, `own` true for
    the run's rows and false for the earlier runs' last writes (the order ties keep)."""
    if writes.num_rows == 0:
        return {}
    ordered = writes.append_column("_at", pa.array(range(writes.num_rows), pa.int64())) \
        .sort_by([(c, "ascending") for c in (*PARTITION, "seq", "write", "_at")])
    was = _previous(ordered.column("leader"))
    leader = ordered.column("leader")
    moved = pc.and_(pc.and_(_same_as_previous(ordered, PARTITION), ordered.column("own")),
                    pc.and_(pc.equal(ordered.column("cause"), "election"),
                            pc.and_(pc.and_(pc.greater_equal(was, 0),
                                            pc.greater_equal(leader, 0)),
                                    pc.not_equal(leader, was))))
    found = ordered.append_column("_was", was).filter(pc.fill_null(moved, False))
    out = {}
    for cluster in pc.unique(found.column("cluster")).to_pylist():
        mine = found.filter(pc.equal(found.column("cluster"), cluster))
        head = mine.sort_by([("seq", "ascending"), ("topic", "ascending"),
                             ("partition", "ascending")]).slice(0, FIRST).to_pylist()
        out[str(cluster)] = Change("leader_moved", mine.num_rows, tuple(
            (r["seq"], r["ts"], r["topic"], r["partition"], None,
             f"{r['_was']} -> {r['leader']}") for r in head))
    return out
