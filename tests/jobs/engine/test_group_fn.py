"""The per-group function without Spark: a fake GroupState, and chunks built by the real
packer (`jobs.engine.pack.pack`) from Arrow batches of operator input rows."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pyarrow as pa

from jobs.engine.codec import decode, decode_counts
from jobs.engine.group_fn import make_replay_fn
from jobs.engine.pack import pack
from schemas import event_types as ET
from schemas.arrow import arrow_schema
from schemas.state import COUNTS_TAG, LIST_COLUMNS, REPLAY_INPUT_SCHEMA
from statemachine.cluster import build_timeline
from statemachine.context import ReplayConfig
from statemachine.events import Event
from statemachine.model import BucketState

COLUMNS = [f.name for f in REPLAY_INPUT_SCHEMA.fields]


class FakeState:
    def __init__(self, value: bytes | None = None) -> None:
        self.value = value

    @property
    def exists(self) -> bool:
        return self.value is not None

    @property
    def get(self) -> tuple[bytes]:
        assert self.value is not None
        return (self.value,)

    def update(self, value: tuple[bytes]) -> None:
        self.value = value[0]


def row(seq: int | None, event_type: str, reason: str | None = None,
        **kw: Any) -> dict[str, Any]:
    r: dict[str, Any] = {c: None for c in COLUMNS}
    r.update(cluster="default", bucket=3, wake=False, reason=reason, seq=seq,
             ts_us=None if seq is None else seq * 1_000_000, event_type=event_type,
             source=f"t:{seq}")
    # Lists reach the operator as JSON text, as `key_events` sends them (Spark's to_json).
    r.update({k: json.dumps(v, separators=(",", ":")) if k in LIST_COLUMNS and v is not None
              else v for k, v in kw.items()})
    return r


def wake_row(horizon: int | None) -> dict[str, Any]:
    """A wake row: the key, the flag and the horizon of the run that wrote it, no event."""
    r: dict[str, Any] = {c: None for c in COLUMNS}
    r.update(cluster="default", bucket=3, wake=True, horizon=horizon)
    return r


ARROW_INPUT = arrow_schema(REPLAY_INPUT_SCHEMA)


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """What the operator hands the function: packed rows of one input batch, as pandas."""
    batch = pa.RecordBatch.from_pylist(rows, schema=ARROW_INPUT)
    return pa.Table.from_batches(list(pack([batch]))).to_pandas()


def outputs(result: list[pd.DataFrame]) -> dict[str, Any]:
    """The tables of the frames one group returned (a spilled group returns several)."""
    out: dict[str, Any] = {}
    for r in pd.concat(result).to_dict("records"):
        if r["table"] == COUNTS_TAG:
            out[COUNTS_TAG] = decode_counts(r["payload"])._asdict()
        else:
            body = decode(r["payload"])
            cols = [[tuple(v) if isinstance(v, list) else v for v in c]
                    for c in body.to_pydict().values()]
            chunk = list(zip(*cols, strict=True))
            assert len(chunk) == r["rows"]
            # A table may come in several payloads (chunks flushed during the fold).
            out.setdefault(r["table"], []).extend(chunk)
            out.setdefault("_payloads", Counter())[r["table"]] += 1
    return out


TIMELINE = build_timeline([Event(1, 1_000_000, ET.CONTROLLER_FAILOVER, broker_id=1,
                                 brokers=(1, 2))])


def test_group_applies_dedupes_quarantines_and_skips_wake_rows() -> None:
    fn = make_replay_fn({"default": TIMELINE}, ReplayConfig())
    state = FakeState()
    chunks = [
        frame([wake_row(None),
               row(2, ET.PARTITION_CREATED, topic="t", partition=0, replicas=[1, 2])]),
        frame([row(2, ET.PARTITION_CREATED, topic="t", partition=0, replicas=[1, 2]),
               row(3, "Nope", reason="unknown event_type Nope", topic="t")]),
    ]
    out = outputs(list(fn(("default", 3), iter(chunks), state)))
    counts = out[COUNTS_TAG]
    assert (counts["rows_read"], counts["rows_applied"], counts["rows_duplicate"],
            counts["rows_quarantined"], counts["rows_late"]) == (3, 1, 1, 1, 0)
    [ps] = out["partition_states"]
    assert ps[:7] == ("t", 0, "OnlinePartition", 1, 0, (1, 2), (1, 2))
    [q] = out["quarantine"]
    assert (q[0], q[1], q[2], q[-1]) == (
        3, datetime(1970, 1, 1, 0, 0, 3, tzinfo=UTC), "Nope", "unknown event_type Nope")
    assert BucketState.from_bytes(state.value).watermark == 2  # type: ignore[arg-type]


def test_output_flushed_in_chunks_equals_output_at_the_end(monkeypatch: Any) -> None:
    import jobs.engine.group_fn as udf

    events = [row(2, ET.PARTITION_CREATED, topic="t", partition=p, replicas=[1, 2])
              for p in range(4)]
    events += [row(3, ET.UNCLEAN_LEADER_ELECTION, topic="t", partition=p) for p in range(4)]
    events += [row(4, ET.ISR_CHANGED, topic="t", partition=p, isr=[1], leader_epoch=0)
               for p in range(4)]

    def run() -> dict[str, Any]:
        fn = make_replay_fn({"default": TIMELINE}, ReplayConfig())
        return outputs(list(fn(("default", 3), iter([frame(events)]), FakeState())))

    whole = run()
    monkeypatch.setattr(udf, "FLUSH_ROWS", 2)
    chunked = run()
    assert chunked["_payloads"]["state_changes"] > whole["_payloads"]["state_changes"] == 1
    for table in ("partition_states", "replica_states", "state_changes",
                  "leader_and_isr_requests", "update_metadata_requests", "findings"):
        assert chunked.get(table) == whole.get(table), table
    assert chunked[COUNTS_TAG]["findings_by_kind"] == whole[COUNTS_TAG]["findings_by_kind"]


def test_late_rows_are_findings_and_state_resumes() -> None:
    fn = make_replay_fn({"default": TIMELINE}, ReplayConfig())
    state = FakeState()
    list(fn(("default", 3), iter([frame([
        row(5, ET.PARTITION_CREATED, topic="t", partition=0, replicas=[1, 2])])]), state))
    out = outputs(list(fn(("default", 3), iter([frame([
        row(4, ET.PREFERRED_LEADER_ELECTION, topic="t", partition=0)])]), state)))
    counts = out[COUNTS_TAG]
    assert (counts["rows_read"], counts["rows_applied"], counts["rows_late"]) == (1, 0, 1)
    assert json.loads(counts["findings_by_kind"]) == {"late_event": 1}
    [f] = out["findings"]
    assert (f[0], f[2], f[3], f[5]) == (4, "t", 0, "late_event")
    # The partition is still there (the state came back from GroupState), unchanged: the
    # run lists no state row for it, and counts it.
    assert "partition_states" not in out
    assert json.loads(counts["partitions_by_state"]) == {"OnlinePartition": 1}


def test_wake_horizon_keeps_a_re_executed_batch_from_overtaking_the_next() -> None:
    """Spark re-executes a batch a crashed run planned (events up to seq 5, horizon 5) with
    the timeline of the whole log (a broker failure at 10); the next batch (an ISR change at
    6, horizon 20) must not be late."""
    timeline = build_timeline([
        Event(1, 0, ET.CONTROLLER_FAILOVER, broker_id=1, brokers=(1, 2)),
        Event(10, 0, ET.BROKER_FAILURE, broker_id=2),
    ])
    created = row(2, ET.PARTITION_CREATED, topic="t", partition=0, replicas=[1, 2])
    isr = row(6, ET.ISR_CHANGED, topic="t", partition=0, isr=[1, 2], leader_epoch=0)

    def two_batches(first_horizon: int | None) -> tuple[dict[str, Any], FakeState]:
        fn = make_replay_fn({"default": timeline}, ReplayConfig())
        state = FakeState()
        list(fn(("default", 3), iter([frame([wake_row(first_horizon), created])]),
                state))
        return outputs(list(fn(("default", 3), iter([frame([wake_row(20), isr])]),
                               state))), state

    out, state = two_batches(5)
    assert (out[COUNTS_TAG]["rows_applied"], out[COUNTS_TAG]["rows_late"]) == (1, 0)
    assert BucketState.from_bytes(state.value).watermark == 10  # type: ignore[arg-type]
    # The failure at 10 reached the partition in the second batch, after the ISR change.
    assert [(c[0], c[5], c[8]) for c in out["state_changes"]][-1] == (10, 2, "OfflineReplica")
    # Without a horizon (a checkpoint from before horizons) the first batch runs to 10.
    out, _ = two_batches(None)
    assert out[COUNTS_TAG]["rows_late"] == 1


def test_cluster_bucket_reports_timeline_findings_once() -> None:
    timeline = build_timeline([
        Event(1, 0, ET.CONTROLLER_FAILOVER, broker_id=1, brokers=(1,)),
        Event(2, 0, ET.BROKER_FAILURE, broker_id=9),
    ])
    fn = make_replay_fn({"default": timeline}, ReplayConfig())
    state = FakeState()
    rows = [row(2, ET.BROKER_FAILURE, broker_id=9, bucket=-1),
            row(2, ET.BROKER_FAILURE, broker_id=9, bucket=-1)]
    first = outputs(list(fn(("default", -1), iter([frame(rows)]), state)))
    assert [f[5] for f in first["findings"]] == ["unknown_broker_failure"]
    assert (first[COUNTS_TAG]["rows_applied"], first[COUNTS_TAG]["rows_duplicate"]) == (1, 1)
    again = outputs(list(fn(("default", -1), iter([frame([wake_row(None)])]), state)))
    assert "findings" not in again


def test_total_order_does_not_depend_on_arrival_order() -> None:
    import random

    from jobs.engine.group_rows import total_order as _total_order

    rows = {
        (5, 0, ET.STOP_REPLICA_RESPONSE, b, "t", p, None, None, None, None, err, None, "s")
        for b in (1, 2, 3) for p in (0, 1) for err in (None, "KAFKA_STORAGE_ERROR")
    } | {(4, 0, ET.ISR_CHANGED, None, "t", 0, None, isr, 1, None, None, None, "s")
         for isr in ((1,), (1, 2))}
    expected = _total_order(set(rows))
    for seed in range(5):
        shuffled = list(rows)
        random.Random(seed).shuffle(shuffled)
        assert _total_order(set(shuffled)) == expected
    assert [r[0] for r in expected] == sorted(r[0] for r in rows)


def test_cluster_rows_below_the_previous_timeline_are_late() -> None:
    timeline = build_timeline([
        Event(1, 0, ET.CONTROLLER_FAILOVER, broker_id=1, brokers=(1, 2)),
        Event(9, 0, ET.BROKER_FAILURE, broker_id=2),
    ])
    fn = make_replay_fn({"default": timeline}, ReplayConfig())
    state = FakeState(BucketState(9).to_bytes())  # the previous run's timeline ended at 9
    rows = [row(4, ET.BROKER_STARTUP, broker_id=3, bucket=-1),
            row(10, ET.BROKER_STARTUP, broker_id=2, bucket=-1)]
    out = outputs(list(fn(("default", -1), iter([frame(rows)]), state)))
    c = out[COUNTS_TAG]
    assert (c["rows_read"], c["rows_applied"], c["rows_late"]) == (2, 1, 1)
    assert [(f[0], f[5]) for f in out["findings"]] == [(4, "late_event")]


def test_a_group_larger_than_spill_rows_is_sorted_externally_with_the_same_output(
    monkeypatch: Any,
) -> None:
    """A group over SPILL_ROWS valid rows is sorted in runs on disk, merged and folded in
    pieces: same rows, same state and same counts (duplicates across runs, late rows) as
    the in-memory path, in several frames."""
    import jobs.engine.group_fn as udf

    saved = FakeState(BucketState(1).to_bytes())  # the previous run reached seq 1
    rows = [row(3, ET.PARTITION_CREATED, topic=t, partition=p, replicas=[1, 2])
            for t in ("a", "b") for p in range(3)]
    rows += [row(4, ET.UNCLEAN_LEADER_ELECTION, topic="a", partition=p) for p in range(3)]
    rows += [row(5, ET.ISR_CHANGED, topic=t, partition=p, isr=[1], leader_epoch=0)
             for t in ("a", "b") for p in range(3)]
    rows += [row(1, ET.PREFERRED_LEADER_ELECTION, topic="a", partition=0)]  # late
    rows += rows[:4] + rows[9:11]  # exact duplicates, in another run than their twins
    rows += [row(6, "Nope", reason="unknown event_type Nope", topic="a")]
    chunks = [frame(rows[i:i + 5]) for i in range(0, len(rows), 5)][::-1]

    def run() -> tuple[list[pd.DataFrame], FakeState]:
        state = FakeState(saved.value)
        fn = make_replay_fn({"default": TIMELINE}, ReplayConfig())
        return list(fn(("default", 3), iter(chunks), state)), state

    whole, whole_state = run()
    monkeypatch.setattr(udf, "SPILL_ROWS", 4)
    monkeypatch.setattr(udf, "PIECE_ROWS", 3)
    monkeypatch.setattr(udf, "FLUSH_ROWS", 2)
    spilled, spilled_state = run()
    # A frame per piece that flushed rows: only the piece path returns more than one.
    assert len(whole) == 1 and len(spilled) > 2
    a, b = outputs(whole), outputs(spilled)
    assert a.keys() == b.keys()
    for table in a.keys() - {COUNTS_TAG, "_payloads"}:
        assert b[table] == a[table], table
    counts = ("rows_read", "rows_applied", "rows_duplicate", "rows_quarantined", "rows_late",
              "findings_by_kind", "partitions_by_state")
    assert [b[COUNTS_TAG][c] for c in counts] == [a[COUNTS_TAG][c] for c in counts]
    assert (a[COUNTS_TAG]["rows_duplicate"], a[COUNTS_TAG]["rows_late"]) == (6, 1)
    assert spilled_state.value == whole_state.value


def test_a_failover_listing_topics_to_be_deleted_is_accounted_for() -> None:
    """A logged failover carries the topics queued for deletion (`topics_to_be_deleted`,
    an Arrow list): rows are hashed to drop exact duplicates, so the list must arrive as
    a tuple, not a Python list (every ingested controller.log failover has one)."""
    failover = dict(broker_id=1, brokers=[1, 2], bucket=-1, topics_to_be_deleted=["gone"])
    fn = make_replay_fn({"default": TIMELINE}, ReplayConfig())
    out = outputs(list(fn(("default", -1), iter([frame(
        [row(1, ET.CONTROLLER_FAILOVER, **failover),
         row(1, ET.CONTROLLER_FAILOVER, **failover)])]), FakeState())))
    assert (out[COUNTS_TAG]["rows_applied"], out[COUNTS_TAG]["rows_duplicate"]) == (1, 1)
