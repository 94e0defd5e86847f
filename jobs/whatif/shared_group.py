"""The what-if's function for `applyInPandasWithState` when its variants share their work.

The query groups the log's rows by (cluster, bucket), as a plain replay does, so each group
holds the log's rows once. Per group it reads them (`jobs.engine.group_fn.read_group`), folds
them for every variant of the cluster (`jobs.whatif.sharing.fold_shared`: the shared prefix
once, each variant from where it leaves the reference), and writes each variant's rows under
its composite cluster, with its own counts row, through `jobs.engine.group_fn.GroupOutput`: the
sink and everything after it see the same tagged rows as from one group per variant.

A variant's counts are those of its own rows: the log's rows it keeps (its drops out, with
their duplicates), plus its injected events of the group.

The group state holds every variant's `BucketState`. A what-if's query is one micro-batch;
should Spark split it, the later batch folds each variant on its own from its saved state.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd
from pyspark.sql.streaming.state import GroupState

from jobs.engine.group_fn import (
    SPILL_ROWS,
    TAGGED_COLUMNS,
    Encoded,
    GroupInput,
    GroupOutput,
    ReplayFn,
    TaggedRow,
    Tally,
    account_cluster,
    emit_to,
    read_group,
)
from jobs.engine.group_rows import GroupRows, Row
from jobs.store.staging import StagingArea
from jobs.whatif.sharing import Forked, Rows, VariantInput, fold_from, fold_shared
from schemas.state import CLUSTER_BUCKET, SHARED_PREFIX_TAG, SHARED_WHOLE_TAG
from statemachine.context import Outputs
from statemachine.events import Event
from statemachine.model import BucketState
from statemachine.replay import gc_paused

STATE_MARK = b"whatif-shared:"  # a group state holding every variant's state


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


def _saved(state: GroupState) -> dict[str, BucketState]:
    if not state.exists:
        return {}
    data = bytes(state.get[0])
    assert data.startswith(STATE_MARK), "a what-if checkpoint of another layout"
    saved: dict[str, bytes] = pickle.loads(data[len(STATE_MARK):])
    return {name: BucketState.from_bytes(b) for name, b in saved.items()}


def replay_shared(bucket: int, pdfs: Iterable[pd.DataFrame], state: GroupState,
                  variants: list[VariantInput], buckets: int,
                  staging: StagingArea | None) -> Iterator[list[TaggedRow]]:
    outputs = {v.composite: GroupOutput(v.composite, bucket, staging) for v in variants}
    group = GroupInput(GroupRows(SPILL_ROWS))
    try:
        read_group(pdfs, group, None)
        saved = _saved(state)
        injected = {v.composite: v.injected_in(bucket, buckets) for v in variants}
        if bucket != CLUSTER_BUCKET and group.empty and not saved \
                and not any(injected.values()):
            return  # every bucket is woken; this one holds no topic of any variant
        rows = group.valid.replayable()

        def emit(names: Sequence[str], out: Outputs) -> None:
            emit_to((outputs[name] for name in names), out)

        quarantined = {v.composite: _quarantined(v, group.quarantined) for v in variants}
        tallies = {v.composite: _tally(v, rows, group, injected[v.composite],
                                       len(quarantined[v.composite])) for v in variants}
        if bucket == CLUSTER_BUCKET:
            forked = {v.composite: _account(v, rows, injected[v.composite],
                                            saved.get(v.composite)) for v in variants}
        elif saved:
            forked = {v.composite: fold_from(v, saved.get(v.composite), 0, rows,
                                             injected[v.composite], -1, emit)
                      for v in variants}
        else:
            forked = fold_shared(rows, variants, bucket, buckets, emit)
    finally:
        group.valid.close()
    state.update((STATE_MARK + pickle.dumps(
        {name: f.state.to_bytes() for name, f in forked.items()}, 5),))
    shared: dict[int, dict[str, Encoded]] = {}  # id of a shared fold's outputs -> its rows
    for v in variants:
        f = forked[v.composite]
        before = saved.get(v.composite)
        late_through = before.watermark if before is not None else -1
        if f.shared or f.whole:
            outputs[v.composite].tagged.append(TaggedRow(
                v.composite, bucket, SHARED_WHOLE_TAG if f.whole else SHARED_PREFIX_TAG,
                f.shared, None))
        yield outputs[v.composite].finish_with(
            _copy(f.out), quarantined[v.composite], tallies[v.composite],
            late_through, f.state, shared.setdefault(id(f.out), {}))


def _copy(out: Outputs) -> Outputs:
    """The rows of a fold several variants share, in lists of their own (finishing a
    group appends to its findings)."""
    copy = Outputs()
    for f in dataclasses.fields(out):
        value = getattr(out, f.name)
        setattr(copy, f.name, list(value) if isinstance(value, list) else value)
    return copy


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


def _account(v: VariantInput, rows: Rows, injected: list[Event],
             saved: BucketState | None) -> Forked:
    """The cluster-scope rows of the variant, accounted for as a plain replay does (its
    timeline applies them), up to its own horizon."""
    distinct = [tuple(e) for e in v.events(rows(), injected)]
    watermark = saved.watermark if saved is not None else -1
    state, out = account_cluster(distinct, v.horizon, v.timeline, watermark, watermark)
    return Forked(state, out)
