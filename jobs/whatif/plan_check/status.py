"""What the core says of one partition after a step (the same for both modes)."""

from __future__ import annotations

from typing import NamedTuple


class PartStatus(NamedTuple):
    leader: int  # -1: none
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    offline: bool  # no leader can serve it: OfflinePartition (ZooKeeper), leader -1 (KRaft)


# (topic, partition) -> its status; one per step, the first before step 1.
Snapshot = dict[tuple[str, int], PartStatus]
