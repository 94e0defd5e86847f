"""What a variant stores of a replay group it shares with its base, and the rule that reads
it back whole.

In a group where a variant leaves the base's fold at seq `before` (`jobs.whatif.sharing`):

* a per-event table (`schemas.whatif.SHARED_EVENT_KEYS`): the base's rows whose key
  column (the seq of the event that wrote the row; a window's `end_seq`) is below `before`
  are the variant's too; it stores the rows it wrote itself, from `before` on;
* a state table (`partition_states`, `replica_states`): partition by partition, the variant
  stores the rows of the partitions whose rows differ from the base's final ones, and
  names the partitions only the base has (`removed`); every other partition's rows are
  the base's.

A group whose input never differs from the base's takes every row of the base's. The
readers (`jobs.store.variant_rows`, `jobs.store.variant_rows_arrow`) apply the same rule to
the stored tables; `with_base` here is its Python form, for the tests of the fold.

Pure Python: no Spark here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from statemachine.rows import PartitionStateRow, ReplicaStateRow

PartitionKey = tuple[str, int]  # (topic, partition)
# The core's output lists of the per-event tables -> the field of their key (the same
# columns as `schemas.whatif.SHARED_EVENT_KEYS`, which names the tables).
EVENT_KEYS: dict[str, str] = {
    "state_changes": "seq",
    "partition_state_writes": "seq",
    "leader_and_isr": "seq",
    "update_metadata": "seq",
    "stop_replica": "seq",
    "findings": "seq",
    "partition_windows": "end_seq",
}


class StateDifference(NamedTuple):
    """A variant's state rows of a group that differ from its base's."""

    partition_states: list[PartitionStateRow]
    replica_states: list[ReplicaStateRow]
    removed: list[PartitionKey]  # partitions the base has and the variant has not


def _by_partition(partitions: Sequence[PartitionStateRow],
                  replicas: Sequence[ReplicaStateRow]) -> dict[PartitionKey, list[Any]]:
    """partition -> [its partition row or None, its replica rows...]."""
    found: dict[PartitionKey, list[Any]] = {}
    for p in partitions:
        found.setdefault((p.topic, p.partition), [None])[0] = p
    for r in replicas:
        found.setdefault((r.topic, r.partition), [None]).append(r)
    return found


def state_difference(base_partitions: Sequence[PartitionStateRow],
                     base_replicas: Sequence[ReplicaStateRow],
                     partitions: Sequence[PartitionStateRow],
                     replicas: Sequence[ReplicaStateRow]) -> StateDifference:
    """The variant's rows (`partitions`, `replicas`: every partition of the group, as a
    fold from a cut lists them) of the partitions whose rows are not the base's, whole: its
    partition row and all its replica rows."""
    base = _by_partition(base_partitions, base_replicas)
    mine = _by_partition(partitions, replicas)
    kept_partitions: list[PartitionStateRow] = []
    kept_replicas: list[ReplicaStateRow] = []
    for key, rows in mine.items():
        if base.get(key) != rows:
            if rows[0] is not None:
                kept_partitions.append(rows[0])
            kept_replicas.extend(rows[1:])
    removed = sorted(key for key in base if key not in mine)
    return StateDifference(kept_partitions, kept_replicas, removed)


def shared_event_rows(table: str, base_rows: Sequence[Any], before: int | None) -> list[Any]:
    """The base's rows of a per-event table (core list `table`) that a variant leaving the
    base's fold at `before` takes (None: it takes the whole group)."""
    if before is None:
        return list(base_rows)
    key = EVENT_KEYS[table]
    return [r for r in base_rows if (k := getattr(r, key)) is not None and k < before]


def with_base(table: str, base_rows: Sequence[Any], own: Sequence[Any], before: int | None,
              overridden: set[PartitionKey] | None = None) -> list[Any]:
    """A variant's whole rows of a group from what it stores (`own`) and its base's rows
    (`overridden`: for a state table, the partitions it wrote or removed)."""
    if table in EVENT_KEYS:
        return shared_event_rows(table, base_rows, before) + list(own)
    kept = [r for r in base_rows if (r.topic, r.partition) not in (overridden or set())]
    return kept + list(own)
