"""Kafka's rack-unaware replica assignment (`AdminUtils.assignReplicasToBrokersRackUnaware`).

The first replica of partition i goes round-robin from a start index; followers are shifted
by a per-topic shift that grows by one each time the partition id wraps the broker list, so
replicas spread evenly and no two partitions share the same follower pattern for long.
"""

from __future__ import annotations

import random


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def assign_replicas(
    brokers: list[int],
    partitions: int,
    replication_factor: int,
    rng: random.Random,
    start_index: int = -1,
    start_partition: int = 0,
) -> list[tuple[int, ...]]:
    """Assignments of partitions `start_partition ..` (`brokers` sorted, RF <= len)."""
    n = len(brokers)
    if not 1 <= replication_factor <= n:
        raise ValueError(f"replication factor {replication_factor} with {n} brokers")
    start = start_index if start_index >= 0 else rng.randrange(n)
    shift = start_index if start_index >= 0 else rng.randrange(n)
    out: list[tuple[int, ...]] = []
    pid = max(0, start_partition)
    for _ in range(partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start) % n
        reps = [brokers[first]]
        reps += [brokers[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1)]
        out.append(tuple(reps))
        pid += 1
    return out
