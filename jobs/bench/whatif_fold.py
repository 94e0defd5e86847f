"""The fold work of a what-if sweep against one replay's, in CPU seconds, without Spark.

    python -m jobs.bench.whatif_fold --preset bench [--seed N] [--buckets N] [--events DIR]

The preset's cached log (`jobs.bench.core.cached_log`), the `fail_each_broker` sweep of
`make bench-whatif` (each broker failed at the log's midpoint), then, in this one process:
the baseline's fold of every group alone (`statemachine.replay.replay`), and every
variant's fold of every group through `jobs.whatif.sharing.fold_shared` (the prefix once,
each variant from its cut). Process CPU time, so the figure holds on a busy machine; the
output rows are counted, not converted (`make bench-core` measures that part).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial

import pyarrow.compute as pc

from jobs.bench.core import cached_log, group_log, read_log
from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.engine.group_rows import Row, fold_order
from jobs.whatif.facts import facts_from_arrow
from jobs.whatif.plan import resolve
from jobs.whatif.scenario import parse_scenario
from jobs.whatif.sharing import VariantInput, fold_shared, timeline_difference
from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.context import Outputs, ReplayConfig
from statemachine.replay import gc_paused, replay

log = logging.getLogger(__name__)


def sweep_inputs(events: str, buckets: int) -> tuple[list[VariantInput], dict[int, list[Row]]]:
    """The sweep's variants of the log's one cluster, and its groups' rows in fold order."""
    table = read_log(events)
    ts = pc.cast(table["ts"], "int64")
    mid = (pc.min(ts).as_py() + pc.max(ts).as_py()) / 2e6
    scenario = {"sweep": {"fail_each_broker": {"at": datetime.fromtimestamp(mid, UTC)}}}
    facts = facts_from_arrow(events)
    assert facts is not None, f"{events}: not readable by pyarrow"
    plans = resolve(parse_scenario(scenario), ReplayConfig(), facts, with_baseline=True)
    groups = group_log(table, buckets)
    cluster = ET.DEFAULT_CLUSTER
    cluster_events = groups.cluster_events[cluster]
    reference = build_timeline(plans[0].edit_cluster_events(cluster, cluster_events))
    variants = []
    for p in plans:
        edited = p.edit_cluster_events(cluster, cluster_events)
        timeline = build_timeline(edited)
        variants.append(VariantInput(
            composite=p.name, cluster=cluster, config=p.config_for(cluster),
            timeline=timeline, horizon=max(e.seq for e in edited), drops=p.drops,
            points=tuple(p.points.get(cluster, [])), failovers=p.failovers.get(cluster, {}),
            injected=tuple(p.injected.get(cluster, [])),
            timeline_differs=timeline_difference(reference, timeline)))
    rows = {b: fold_order({tuple(e) for e in evs})
            for (c, b), evs in groups.buckets.items() if c == cluster}
    return variants, rows


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("bench-fold", None if argv is None else list(argv), run_bench_fold)


def run_bench_fold(argv: list[str], _spark: object) -> int:
    p = command_parser("jobs.bench.whatif_fold", __doc__)
    p.add_argument("--preset", default="bench")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--buckets", type=int, default=8)
    p.add_argument("--events", help="a simulated log to use instead of the preset's cached one")
    args = p.parse_args(argv)
    events = args.events or cached_log(args.preset, args.seed)[0]
    variants, rows = sweep_inputs(str(events), args.buckets)
    counted = [0]

    def count(names: Sequence[str], out: Outputs) -> None:
        counted[0] += len(names) * out.event_rows()

    with gc_paused():
        started = time.process_time()
        ref = variants[0]
        for bucket_rows in rows.values():
            replay(None, list(ref.events(bucket_rows, [])), ref.timeline, ref.config,
                   until=ref.horizon)
        one = time.process_time() - started
        started = time.process_time()
        for bucket, bucket_rows in rows.items():
            fold_shared(partial(iter, bucket_rows), variants, bucket, args.buckets, count)
        sweep = time.process_time() - started
    log.info(f"{args.preset}: fail_each_broker at the midpoint, {len(variants)} "
          f"variants: one replay's fold {one:.1f} CPU s, the sweep's shared fold "
          f"{sweep:.1f} CPU s -> {sweep / one:.2f}x (each variant alone: {len(variants)}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
