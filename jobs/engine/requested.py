"""What the run's log asked the controller to do, for the `changes` digest: the
administrative events whose outcome no output table names by its request (an election
writes the partition state whatever asked for it; a config change writes nothing).

Counted with the log's facts, by the same Spark query (`jobs.engine.log_checks_query`: per
block of seqs, summed on the driver; `requested` here is the pure reading of a table of
rows), and kept with those facts in the checkpoint's history, so a rerun of a killed run
lists the same requests. A late row (at or below what the committed
runs applied) asked nothing of this run.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from schemas import event_types as ET

# Event type -> the change it names in the digest.
REQUESTS = {
    ET.PREFERRED_LEADER_ELECTION: "preferred_election",
    ET.TOPIC_CONFIG_CHANGED: "topic_config_changed",
    ET.TOPIC_DELETION_REQUESTED: "topic_deletion_requested",
}
FIRST = 5  # rows listed per change (the count is whole)
# (seq, ts_us, topic, partition, broker_id, detail)
Listed = tuple[int, int | None, str | None, int | None, int | None, str | None]
# (change, count, first rows)
Requested = tuple[str, int, tuple[Listed, ...]]


def detail(event_type: str, unclean: bool | None) -> str | None:
    if event_type == ET.TOPIC_CONFIG_CHANGED and unclean is not None:
        return f"unclean.leader.election.enable={str(unclean).lower()}"
    return None


def requested(rows: pa.Table, applied_through: int | None) -> tuple[Requested, ...]:
    """Per requesting event type present, its distinct scopes among one cluster's narrow
    rows above `applied_through`: the count and the first rows by seq."""
    types = rows.column("event_type")
    keep = pc.is_in(types, pa.array(list(REQUESTS)))
    if applied_through is not None:
        keep = pc.and_kleene(keep, pc.greater(rows.column("seq"), applied_through))
    mine = rows.filter(keep)
    if not mine.num_rows:
        return ()
    scope = ["seq", "event_type", "topic", "partition", "broker_id"]
    # Exact duplicates are one request; the first time and value of a scope stand for it.
    distinct = mine.group_by(scope, use_threads=False).aggregate(
        [("ts_us", "min"), ("unclean", "first")]).sort_by(
        [("seq", "ascending"), ("topic", "ascending"), ("partition", "ascending")])
    out = []
    for event_type, change in REQUESTS.items():
        these = distinct.filter(pc.equal(distinct.column("event_type"), event_type))
        if not these.num_rows:
            continue
        head = these.slice(0, FIRST).to_pylist()
        first = tuple((r["seq"], r["ts_us_min"], r["topic"], r["partition"], r["broker_id"],
                       detail(event_type, r["unclean_first"])) for r in head)
        out.append((change, these.num_rows, first))
    return tuple(out)
