"""What a variant's edits reach, counted on the driver from the log's facts before Spark
starts: the rows each `drop` entry matches (an entry that matches none is refused, it is
a typo or a seq of another log), and the partitions whose own events the variant changes.

The rows are `ClusterFacts.rows` (sorted by seq); an entry with a `seq` looks at that seq's
rows only, any other entry at every row of its clusters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jobs.whatif.facts import ClusterFacts
from jobs.whatif.scenario import Drop
from statemachine.events import Event

BOUNDS = {"seq_from": ("seq", pc.greater_equal), "seq_to": ("seq", pc.less_equal),
          "ts_from": ("ts", pc.greater_equal), "ts_to": ("ts", pc.less_equal)}


@dataclass(frozen=True)
class EditCounts:
    """What one variant changes in the log (all clusters)."""

    dropped: int = 0  # rows of the log removed
    injected: int = 0  # events added
    edited: int = 0  # rows of the log changed in place (failovers' live brokers)
    partitions: int = 0  # partitions whose own (partition or topic) events changed


def drop_rows(drop: Drop, cluster: str, facts: ClusterFacts) -> np.ndarray:
    """Indices into `facts.rows` of the rows `drop` matches (the twin of
    `jobs.whatif.plan.drop_matches`: a field compared with a null never matches)."""
    if drop.get("cluster") not in (None, cluster):
        return np.zeros(0, np.int64)
    start, stop = (facts.rows_of_seq(drop.get("seq")) if drop.get("seq") is not None
                   else (0, facts.rows.num_rows))
    rows = facts.rows.slice(start, stop - start)
    mask = pa.array(np.ones(rows.num_rows, bool))
    for name, value in drop.fields:
        if name in ("cluster", "seq"):
            continue
        column, compare = BOUNDS.get(name, (name, pc.equal))
        mask = pc.and_(mask, pc.fill_null(compare(rows.column(column), value), False))
    return np.flatnonzero(mask.to_numpy(zero_copy_only=False)) + start


def partitions_of(facts: ClusterFacts, indices: np.ndarray,
                  injected: list[Event]) -> set[tuple[str, int]]:
    """The partitions whose own events change: those of the dropped rows and injected
    events, every partition of the topic for a topic-scope one."""
    rows = facts.rows.take(pa.array(indices, pa.int64())).select(["topic", "partition"])
    touched = [(r["topic"], r["partition"]) for r in rows.to_pylist()]
    touched += [(e.topic, e.partition) for e in injected]
    found = {(t, p) for t, p in touched if t is not None and p is not None}
    topics = {t for t, p in touched if t is not None and p is None}
    if topics:
        everything = facts.rows.filter(pc.is_in(facts.rows.column("topic"),
                                                value_set=pa.array(sorted(topics))))
        found |= {(r["topic"], r["partition"])
                  for r in everything.select(["topic", "partition"]).to_pylist()
                  if r["partition"] is not None}
    return found
