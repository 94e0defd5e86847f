"""The state a plan starts from: the latest run of a replay's output, read with pyarrow.

`partition_states` is read whole after the run (`jobs.store.latest_state_arrow`), the
brokers' status is each broker's latest interval of `broker_timeline` (any run: a run lists
the brokers its own events changed). A KRaft replay's output is told by its
`metadata_writes` table: the same `partition_states`, replayed into a metadata image.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from jobs.common.exitcodes import BadInput
from jobs.store.latest_run import latest_run
from jobs.store.latest_state_arrow import arrow_state
from jobs.store.layout import RUN_PARTITIONING, OutLayout

ZOOKEEPER, KRAFT = "zookeeper", "kraft"
LIVE, SHUTTING_DOWN = "live", "shutting_down"


@dataclass(frozen=True)
class PartitionRow:
    topic: str
    partition: int
    state: str
    leader: int | None
    leader_epoch: int | None
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    zk_version: int | None
    controller_epoch: int | None


@dataclass(frozen=True)
class StartState:
    """One cluster's partitions and broker status after `run_id`."""

    out_dir: str
    run_id: str
    cluster: str
    mode: str  # ZOOKEEPER or KRAFT
    partitions: tuple[PartitionRow, ...]
    brokers: dict[int, str]  # broker -> live | shutting_down | dead
    # A describe dump's topic configs (a replay's tables hold none: the plan's [settings])
    topic_min_isr: dict[str, int] = field(default_factory=dict)
    topic_unclean: dict[str, bool] = field(default_factory=dict)

    @property
    def live(self) -> frozenset[int]:
        return frozenset(b for b, s in self.brokers.items() if s == LIVE)

    @property
    def serving(self) -> frozenset[int]:
        """Live or shutting down: a broker in controlled shutdown still serves (and leads
        what it could not hand over) until it exits."""
        return frozenset(b for b, s in self.brokers.items() if s in (LIVE, SHUTTING_DOWN))

    def known_brokers(self) -> frozenset[int]:
        return frozenset(self.brokers) | frozenset(
            r for p in self.partitions for r in p.replicas)


def read_start_state(out_dir: str, run_id: str | None, cluster: str | None) -> StartState:
    """The state after `run_id` (default: the latest run) of `cluster` (default: the only
    one); BadInput with one line when there is none."""
    run = run_id or latest_run(out_dir).run_id
    if not (Path(out_dir) / "partition_states").is_dir():
        raise BadInput(f"--from-state {out_dir}: no partition_states table (is it a "
                       "jobs.replay --out directory?)")
    try:
        rows = arrow_state(out_dir, "partition_states", run)
    except (OSError, pa.ArrowException) as exc:
        raise BadInput(f"--from-state {out_dir}: cannot read partition_states: {exc}") from None
    if "variant" in rows.schema.names:
        raise BadInput(f"--from-state {out_dir}: a what-if output (its tables have a variant "
                       "column); give the replay's --out")
    chosen = _cluster(rows, cluster, out_dir, run)
    rows = rows.filter(pc.equal(rows.column("cluster"), chosen))
    mode = KRAFT if (Path(OutLayout(out_dir).partition("metadata_writes", run))).is_dir() \
        else ZOOKEEPER
    return StartState(out_dir, run, chosen, mode, _partitions(rows),
                      _brokers(out_dir, chosen))


def _cluster(rows: pa.Table, cluster: str | None, out_dir: str, run: str) -> str:
    clusters = sorted(set(rows.column("cluster").to_pylist()))
    if not clusters:
        raise BadInput(f"--from-state {out_dir}: run {run} holds no partition")
    if cluster is not None:
        if cluster not in clusters:
            raise BadInput(f"--cluster {cluster}: not in run {run} of {out_dir} (clusters: "
                           + ", ".join(clusters) + ")")
        return cluster
    if len(clusters) > 1:
        raise BadInput(f"--from-state {out_dir}: run {run} holds clusters "
                       + ", ".join(clusters) + ": give --cluster")
    return str(clusters[0])


def _partitions(rows: pa.Table) -> tuple[PartitionRow, ...]:
    out = []
    for r in rows.to_pylist():
        # A deleted partition, or one queued for deletion, is going away: no plan moves it.
        if r["state"] == "NonExistentPartition" or r["queued_for_deletion"]:
            continue
        out.append(PartitionRow(r["topic"], r["partition"], r["state"], r["leader"],
                                r["leader_epoch"], tuple(r["isr"] or ()),
                                tuple(r["replicas"] or ()), r["zk_version"],
                                r["controller_epoch"]))
    return tuple(sorted(out, key=lambda p: (p.topic, p.partition)))


def _brokers(out_dir: str, cluster: str) -> dict[int, str]:
    """Each broker's latest status (the interval with the highest `seq_from`)."""
    path = Path(out_dir) / "broker_timeline"
    if not path.is_dir():
        raise BadInput(f"--from-state {out_dir}: no broker_timeline table")
    table = ds.dataset(str(path), format="parquet", partitioning=RUN_PARTITIONING).to_table(
        columns=["cluster", "broker_id", "status", "seq_from"],
        filter=pc.field("cluster") == cluster)
    latest: dict[int, tuple[int, str]] = {}
    for r in table.to_pylist():
        seq = -1 if r["seq_from"] is None else int(r["seq_from"])
        if r["broker_id"] not in latest or seq >= latest[r["broker_id"]][0]:
            latest[int(r["broker_id"])] = (seq, str(r["status"]))
    return {b: s for b, (_, s) in sorted(latest.items())}
