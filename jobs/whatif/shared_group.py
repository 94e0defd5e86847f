"""The what-if's function for `applyInPandasWithState` when its variants share their work.

The query groups the log's rows by (cluster, bucket), as a plain replay does, so each group
holds the log's rows once. Per group it reads them (`jobs.engine.group_fn.read_group`), folds
them for every variant of the cluster (`jobs.whatif.sharing.fold_shared`: the shared prefix
once, each variant from where it leaves the reference), and writes the rows each variant
does not share with the reference under its composite cluster (`jobs.whatif.variant_files`:
the what-if's own columns), with its own counts row, through `jobs.engine.group_fn.GroupOutput`,
and the group's `whatif_sharing` rows: which of the reference's rows each variant takes
(`jobs.whatif.differences`). The reference's rows are written once.

A variant's counts are those of its whole rows: the log's rows it keeps (its drops out, with
their duplicates), plus its injected events of the group; the findings it takes from the
reference are in its findings by kind, the rows it takes in `whatif_sharing.rows_shared`.

A what-if's query is one micro-batch (a fresh checkpoint, `availableNow`, no rate limit):
its group state only keeps Spark's bookkeeping; a group that finds a state saved by an
earlier batch refuses to go on rather than write rows that would not add up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd
from pyspark.sql.streaming.state import GroupState

from jobs.engine.group_fn import (
    EVENT_TABLES,
    SPILL_ROWS,
    TAGGED_COLUMNS,
    GroupInput,
    ReplayFn,
    TaggedRow,
    Tally,
    account_cluster,
    emit_to,
    read_group,
)
from jobs.engine.group_rows import GroupRows, Row
from jobs.store.staging import StagingArea
from jobs.whatif.differences import state_difference
from jobs.whatif.sharing import Forked, Rows, VariantInput, fold_shared
from jobs.whatif.variant_files import VariantOutput, write_sharing
from schemas.state import CLUSTER_BUCKET, SHARED_PREFIX_TAG, SHARED_WHOLE_TAG
from statemachine.context import Outputs
from statemachine.events import Event
from statemachine.replay import gc_paused

STATE_MARK = b"whatif-shared:"  # the group state of a what-if's one micro-batch
TABLE_OF = dict(EVENT_TABLES)  # core output list -> table


class SecondBatch(RuntimeError):
    """A what-if group saw a second micro-batch."""


def make_shared_replay_fn(variants: dict[str, list[VariantInput]], buckets: int) -> ReplayFn:
    """The per-group function; `variants` maps each cluster of the log to its variants, the
    reference first."""

    def replay_group(key: tuple[Any, ...], pdfs: Iterable[pd.DataFrame],
                     state: GroupState) -> Iterator[pd.DataFrame]:
        cluster, bucket = str(key[0]), int(key[1])  # the grouping key: (cluster, bucket)
        with gc_paused():
            for tagged in replay_shared(bucket, pdfs, state, variants[cluster], buckets,
                                        StagingArea.of_task()):
                if tagged:
                    yield pd.DataFrame.from_records(tagged, columns=TAGGED_COLUMNS)

    return replay_group


def replay_shared(bucket: int, pdfs: Iterable[pd.DataFrame], state: GroupState,
                  variants: list[VariantInput], buckets: int,
                  staging: StagingArea | None) -> Iterator[list[TaggedRow]]:
    if state.exists:
        raise SecondBatch("a what-if's query is one micro-batch: a second one would fold "
                          "its variants apart from the rows they share")
    outputs = {v.composite: VariantOutput(v.composite, bucket, staging, real_cluster=v.cluster,
                                          variant=v.variant) for v in variants}
    group = GroupInput(GroupRows(SPILL_ROWS))
    try:
        read_group(pdfs, group, None)
        injected = {v.composite: v.injected_in(bucket, buckets) for v in variants}
        if bucket != CLUSTER_BUCKET and group.empty and not any(injected.values()):
            return  # every bucket is woken; this one holds no topic of any variant
        rows = group.valid.replayable()

        def emit(names: Sequence[str], out: Outputs) -> None:
            emit_to((outputs[name] for name in names), out)

        quarantined = {v.composite: _quarantined(v, group.quarantined) for v in variants}
        tallies = {v.composite: _tally(v, rows, group, injected[v.composite],
                                       len(quarantined[v.composite])) for v in variants}
        if bucket == CLUSTER_BUCKET:
            forked = {v.composite: _account(v, rows, injected[v.composite]) for v in variants}
        else:
            forked = fold_shared(rows, variants, bucket, buckets, emit)
    finally:
        group.valid.close()
    state.update((STATE_MARK,))
    base = forked[variants[0].composite].out
    sharing = []
    for v in variants:
        f = forked[v.composite]
        if f.whole or f.before is not None:
            sharing.append(_shared(v, variants[0], f, base, bucket, buckets))
            outputs[v.composite].kinds.update(f.shared_kinds)
            outputs[v.composite].tagged.append(TaggedRow(
                v.composite, bucket, SHARED_WHOLE_TAG if f.whole else SHARED_PREFIX_TAG,
                f.shared, None))
        yield outputs[v.composite].finish_with(f.out, quarantined[v.composite],
                                               tallies[v.composite], -1, f.state)
    if staging is not None:
        write_sharing(staging, variants[0].cluster, bucket, sharing)


def _shared(v: VariantInput, ref: VariantInput, f: Forked, base: Outputs, bucket: int,
            buckets: int) -> dict[str, Any]:
    """The variant's `whatif_sharing` row of the group. A variant that left the reference
    at a cut keeps of its state rows only those of the partitions that differ (`f.out`'s
    state lists replaced)."""
    rows = Counter({TABLE_OF[name]: n for name, n in f.shared_rows.items()})
    removed: list[tuple[str, int]] = []
    if f.whole:
        rows["partition_states"] = len(base.partition_states)
        rows["replica_states"] = len(base.replica_states)
    else:
        diff = state_difference(base.partition_states, base.replica_states,
                                f.out.partition_states, f.out.replica_states)
        f.out.partition_states, f.out.replica_states = diff.partition_states, \
            diff.replica_states
        removed = diff.removed
        overridden = {(p.topic, p.partition) for p in diff.partition_states}
        overridden.update((r.topic, r.partition) for r in diff.replica_states)
        overridden.update(removed)
        rows["partition_states"] = sum((p.topic, p.partition) not in overridden
                                       for p in base.partition_states)
        rows["replica_states"] = sum((r.topic, r.partition) not in overridden
                                     for r in base.replica_states)
    return {"cluster": v.cluster, "variant": v.variant, "base": ref.variant,
            "buckets": buckets, "bucket": bucket, "before_seq": f.before,
            "removed": [{"topic": t, "partition": p} for t, p in removed],
            "rows_shared": sorted((t, n) for t, n in rows.items() if n)}


def _tally(v: VariantInput, rows: Rows, group: GroupInput, injected: list[Event],
           quarantined: int) -> Tally:
    """The variant's input rows of the group: the log's minus its drops (their duplicates
    too), plus its injected events; `quarantined` of them are the log's bad rows it keeps."""
    valid, duplicates, last_ts = group.valid.rows, group.valid.duplicates, group.last_ts
    if v.drops:
        repeated = group.valid.repeated
        valid, last_ts = 0, -1
        for row in rows():
            if v.edit(row) is None:
                duplicates -= repeated.get(row, 0)
                continue
            valid += 1 + repeated.get(row, 0)
            last_ts = max(last_ts, int(row[1]))  # ts in microseconds
    last_ts = max([last_ts, *(int(e.ts) for e in injected)])
    return Tally(valid + len(injected), duplicates, quarantined, last_ts)


def _quarantined(v: VariantInput, rows: list[Row]) -> list[Row]:
    """The log's quarantined rows as the variant has them (its seqs, its drops out)."""
    kept = []
    for row in rows:
        e = v.edit(row[:-1])
        if e is not None:
            kept.append((*e, row[-1]))
    return kept


def _account(v: VariantInput, rows: Rows, injected: list[Event]) -> Forked:
    """The cluster-scope rows of the variant, accounted for as a plain replay does (its
    timeline applies them), up to its own horizon."""
    distinct = [tuple(e) for e in v.events(rows(), injected)]
    state, out = account_cluster(distinct, v.horizon, v.timeline, -1, -1)
    return Forked(state, out)
