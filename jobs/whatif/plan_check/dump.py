"""`--from-state FILE`: the state of a `kafka-topics --describe` output (or a ZooKeeper
partition-state dump), read by `jobs.ingest.snapshot`, when no replay's tables are at hand.

A dump does not list the brokers: a broker that leads a partition or is in an ISR is
taken as live (the controller would have removed a dead one from every ISR, ZooKeeper
mode's `onReplicasBecomeOffline`), one that is only ever an assigned replica as dead.
The topics' `min.insync.replicas` and `unclean.leader.election.enable` come from the
dump's `Configs:` (the plan's [settings] win). The ZooKeeper-mode core runs the plan.
"""

from __future__ import annotations

from pathlib import Path

from jobs.common.exitcodes import BadInput
from jobs.ingest.snapshot import read_snapshots
from jobs.whatif.plan_check.state import LIVE, ZOOKEEPER, PartitionRow, StartState

MIN_ISR, UNCLEAN = "min.insync.replicas", "unclean.leader.election.enable"


def read_dump_state(path: str) -> StartState:
    try:
        snapshot = read_snapshots([path])
    except OSError as exc:
        raise BadInput(f"--from-state {path}: cannot read: {exc.strerror or exc}") from None
    if snapshot.unreadable:
        bad = snapshot.unreadable[0]
        raise BadInput(f"--from-state {path}: {bad.source}: {bad.reason}: {bad.text[:80]!r}")
    rows = []
    for p in snapshot.partitions:
        if not p.replicas:
            continue
        leader = -1 if p.leader is None else p.leader
        rows.append(PartitionRow(p.topic, p.partition,
                                 "OnlinePartition" if leader >= 0 else "OfflinePartition",
                                 leader, p.leader_epoch, tuple(p.isr or ()), tuple(p.replicas),
                                 p.zk_version, p.controller_epoch))
    if not rows:
        raise BadInput(f"--from-state {path}: no partition with replicas in it")
    live = {r.leader for r in rows if r.leader is not None and r.leader >= 0}
    live |= {b for r in rows for b in r.isr}
    brokers = {b: LIVE if b in live else "dead" for b in sorted({b for r in rows
                                                                  for b in r.replicas} | live)}
    min_isr: dict[str, int] = {}
    unclean: dict[str, bool] = {}
    for t in snapshot.topics:
        configs = t.configs or {}
        if configs.get(MIN_ISR, "").strip().isdigit():
            min_isr[t.topic] = int(configs[MIN_ISR])
        if configs.get(UNCLEAN, "").strip().lower() in ("true", "false"):
            unclean[t.topic] = configs[UNCLEAN].strip().lower() == "true"
    return StartState(path, Path(path).name, "default", ZOOKEEPER,
                      tuple(sorted(rows, key=lambda r: (r.topic, r.partition))), brokers,
                      min_isr, unclean)
