"""The log checks of `jobs.engine.log_checks` as Spark aggregations over the executors: the
driver receives a few numbers per block of seqs, never the rows.

The rows with a usable seq are shuffled once, by (cluster, block of 2^`BLOCK_BITS` seqs),
and everything after that shuffle stays inside a block's partition:

1. one row per scope (cluster, seq, event type, broker, topic, partition): whether its
   contents differ (two events at one seq), its times, its applied times (those inside the
   plausible range);
2. one row per seq: whether it is conflicting (two event families, or a scope with two
   contents), its earliest and latest time, its applied times (none when conflicting);
3. a window over each block in seq order: the previous seq beyond the baseline (a hole
   before this one is missing events) and the latest applied time before this seq (this
   seq's earliest applied time more than the tolerance before it: time runs backwards);
4. one row per block: its seq range, late seqs, conflicting seqs, gaps, backwards seqs
   (count and the first ones) and the requests of `jobs.engine.requested`.

The driver strings a cluster's blocks together in seq order (`combine`): the gaps between
blocks, and time running backwards against an earlier block. That last check needs the
latest time of every earlier block; a block whose earliest applied time is that far behind
is judged again by a second query over its rows only (`summaries` with `before`), which a
log whose time only moves on never runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.engine.keying import cluster_sql
from jobs.engine.log_checks import CONTENT, FAMILY, LISTED, SeqFacts
from jobs.engine.requested import FIRST, REQUESTS, Listed, Requested, detail
from jobs.engine.sql_text import col, quote
from schemas import event_types as ET
from schemas.events import EVENT_SCHEMA

BLOCK_BITS = 14  # 16,384 seqs per block: a block is one task's, its lists bounded
SCOPE = ("cluster", "block", "seq", "event_type", "broker_id", "topic", "partition")
LIST_COLUMNS = {f.name for f in EVENT_SCHEMA.fields if f.dataType.typeName() == "array"}
Block = dict[str, Any]
TsRange = tuple[int | None, int | None]
# The seqs of a block before this one, in seq order.
EARLIER = ("OVER (PARTITION BY `cluster`, `block` ORDER BY `seq` "
           "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)")


# Every expression below is Spark SQL text, each column one `F.expr` (one py4j round trip):
# built with the Column API the query took about 3,400 round trips, every run.
def _exprs(named: Mapping[str, str]) -> list[Column]:
    return [F.expr(f"{sql} AS {col(name)}") for name, sql in named.items()]


def _text(name: str) -> str:
    """A content column as the fingerprint's text (`log_checks._as_text`): lists joined
    with "," (null when an element is, as pyarrow's `binary_join`), times as microseconds,
    nulls as "-"."""
    c = col(name)
    if name in LIST_COLUMNS:
        text = (f"CASE WHEN exists({c}, x -> x IS NULL) THEN NULL "
                f"ELSE array_join(transform({c}, x -> CAST(x AS STRING)), ',') END")
    elif name == "ts":
        text = f"CAST(unix_micros({c}) AS STRING)"
    else:
        text = f"CAST({c} AS STRING)"
    return f"coalesce({text}, '-')"


def _family() -> str:
    """The event family of a row (`log_checks.FAMILY`, else its own type)."""
    cases = " ".join(f"WHEN {quote(t)} THEN {quote(f)}" for t, f in sorted(FAMILY.items()))
    return f"CASE `event_type` {cases} ELSE `event_type` END"


def _lookup(values: Mapping[str, int]) -> str:
    """Per cluster, its value in `values` as a literal (null for a cluster without one)."""
    if not values:
        return "CAST(NULL AS BIGINT)"
    pairs = ", ".join(f"{quote(c)}, {int(v)}L" for c, v in sorted(values.items()))
    return f"map({pairs})[`cluster`]"


def _block_key() -> str:
    return f"concat_ws({quote(chr(0))}, `cluster`, CAST(`block` AS STRING))"


def _rows(events: DataFrame, block_bits: int, ts_range: TsRange) -> DataFrame:
    """The rows with a usable seq, narrowed to what the checks read."""
    ts = "unix_micros(`ts`)"
    low, high = ts_range
    bounds = []
    if low is not None:
        bounds.append(f"{ts} >= {int(low)}L")
    if high is not None:
        bounds.append(f"{ts} <= {int(high)}L")
    plausible = " AND ".join(bounds) or "true"
    return events.where(F.expr("`seq` IS NOT NULL AND `seq` >= 0")).select(*_exprs({
        "cluster": cluster_sql(),
        "block": f"shiftright(`seq`, {int(block_bits)})",
        **{c: col(c) for c in ("seq", "event_type", "broker_id", "topic", "partition")},
        "ts_us": ts,
        "applied_ts": f"CASE WHEN {plausible} THEN {ts} END",
        "fingerprint": f"concat_ws('|', {', '.join(_text(c) for c in CONTENT)})",
        # The setting of a TopicConfigChanged: the first one given, in read order
        # (pyarrow's "first" of `jobs.engine.requested`).
        "config": (f"CASE WHEN `event_type` = {quote(ET.TOPIC_CONFIG_CHANGED)} "
                   "AND `unclean_leader_election` IS NOT NULL THEN named_struct("
                   "'file', `_metadata`.`file_path`, 'row', `_metadata`.`row_index`, "
                   "'unclean', `unclean_leader_election`) END"),
    }))


def _scopes(rows: DataFrame, applied: Mapping[str, int]) -> DataFrame:
    """One row per scope, after one shuffle by (cluster, block)."""
    return rows.repartition("cluster", "block").groupBy(*SCOPE).agg(*_exprs({
        "contents_differ": "min(`fingerprint`) != max(`fingerprint`)",
        "ts_lo": "min(`ts_us`)", "ts_hi": "max(`ts_us`)",
        "applied_lo": "min(`applied_ts`)", "applied_hi": "max(`applied_ts`)",
        "config": "min(`config`)",
    })).select("*", *_exprs({"on_time": f"`seq` > coalesce({_lookup(applied)}, -1L)",
                             "family": _family()}))


def _seqs(scopes: DataFrame, baseline: Mapping[str, int], applied: Mapping[str, int],
          tolerance_us: int, before: Mapping[str, int]) -> DataFrame:
    """One row per seq, with the window's previous beyond-baseline seq and whether its time
    runs backwards (`before`: per block key, the latest applied time of the blocks before)."""
    seqs = scopes.groupBy("cluster", "block", "seq").agg(*_exprs({
        "conflict": ("coalesce(min(`family`) != max(`family`), false) "
                     "OR max(`contents_differ`)"),
        "applied_lo": "min(`applied_lo`)", "applied_hi": "max(`applied_hi`)"}))
    # A conflicting seq is quarantined whole: its times are not applied.
    base = _lookup(baseline)
    beyond = f"CASE WHEN {base} IS NULL OR `seq` > {base} THEN `seq` END"
    latest = f"max(`applied_hi`) {EARLIER}"
    if before:
        pairs = ", ".join(f"{quote(k)}, {int(v)}L" for k, v in sorted(before.items()))
        latest = f"greatest({latest}, map({pairs})[{_block_key()}])"
    return seqs.select(*_exprs({
        "cluster": "`cluster`", "block": "`block`", "seq": "`seq`", "conflict": "`conflict`",
        "applied_lo": "CASE WHEN NOT `conflict` THEN `applied_lo` END",
        "applied_hi": "CASE WHEN NOT `conflict` THEN `applied_hi` END"})).select(
        "*", *_exprs({
            "beyond": beyond, "prev_beyond": f"max({beyond}) {EARLIER}",
            "late": f"CASE WHEN `seq` <= {_lookup(applied)} THEN `seq` END",
            "back": f"coalesce(`applied_lo` < {latest} - {int(tolerance_us)}L, false)"}))


def _blocks(seqs: DataFrame) -> DataFrame:
    """One row per block: its ranges, and its lists (each sorted)."""
    gap = ("CASE WHEN `beyond` IS NOT NULL AND `seq` > `prev_beyond` + 1 "
           "THEN array(`prev_beyond` + 1, `seq` - 1) END")
    return seqs.groupBy("cluster", "block").agg(*_exprs({
        "seq_lo": "min(`seq`)", "seq_hi": "max(`seq`)",
        "beyond_lo": "min(`beyond`)", "beyond_hi": "max(`beyond`)",
        "late_lo": "min(`late`)", "late_hi": "max(`late`)",
        "applied_lo": "min(`applied_lo`)", "applied_hi": "max(`applied_hi`)",
        "conflicts": "array_sort(collect_list(CASE WHEN `conflict` THEN `seq` END))",
        "gaps": f"array_sort(collect_list({gap}))",
        "back_n": "count(CASE WHEN `back` THEN 1 END)",
        "back_first": ("slice(array_sort(collect_list(CASE WHEN `back` THEN `seq` END)), "
                       f"1, {LISTED})"),
    }))


def _requests(scopes: DataFrame) -> DataFrame:
    """Per block, per requesting event type: its distinct on-time scopes counted, and the
    first ones in (seq, topic, partition) order, nulls last (`jobs.engine.requested`)."""
    listed = ("named_struct('seq', `seq`, 'no_topic', `topic` IS NULL, 'topic', `topic`, "
              "'no_partition', `partition` IS NULL, 'partition', `partition`, "
              "'no_broker', `broker_id` IS NULL, 'broker_id', `broker_id`, "
              "'ts_lo', `ts_lo`, 'unclean', `config`.`unclean`)")
    aggs: dict[str, str] = {}
    for event_type, change in REQUESTS.items():
        mine = f"`on_time` AND `event_type` = {quote(event_type)}"
        aggs[f"n_{change}"] = f"count(CASE WHEN {mine} THEN 1 END)"
        aggs[f"first_{change}"] = (f"slice(array_sort(collect_list(CASE WHEN {mine} "
                                   f"THEN {listed} END)), 1, {FIRST})")
    return scopes.groupBy("cluster", "block").agg(*_exprs(aggs))


def summaries(events: DataFrame, baseline: Mapping[str, int], applied: Mapping[str, int],
              tolerance_us: int, ts_range: TsRange = (None, None),
              block_bits: int = BLOCK_BITS, before: Mapping[str, int] | None = None
              ) -> list[Block]:
    """The rows of the blocks (one Spark job, one shuffle of the rows with a usable seq);
    with `before`, of those blocks only (keyed by `_block_key`)."""
    rows = _rows(events, block_bits, ts_range)
    if before:
        keys = ", ".join(quote(k) for k in sorted(before))
        rows = rows.where(F.expr(f"{_block_key()} IN ({keys})"))
    scopes = _scopes(rows, applied)
    blocks = _blocks(_seqs(scopes, baseline, applied, tolerance_us, before or {}))
    joined = blocks.join(_requests(scopes), ["cluster", "block"], "left")
    return [r.asDict(recursive=True) for r in joined.collect()]


def _gaps(blocks: list[Block], baseline: int | None) -> list[tuple[int, int]]:
    """Each block's gaps, and those between blocks (and since the baseline)."""
    out: list[tuple[int, int]] = []
    last = baseline
    for b in blocks:
        if b["beyond_lo"] is None:
            continue
        if last is not None and b["beyond_lo"] > last + 1:
            out.append((last + 1, b["beyond_lo"] - 1))
        out += [(g[0], g[1]) for g in b["gaps"]]
        last = b["beyond_hi"]
    return out


def recheck(blocks: list[Block], tolerance_us: int) -> dict[str, int]:
    """The blocks (by key) whose earliest applied time is more than the tolerance before
    the latest applied time of their cluster's blocks before them, with that latest time
    (`blocks` in (cluster, block) order)."""
    out: dict[str, int] = {}
    latest: int | None = None
    for i, b in enumerate(blocks):
        if i and blocks[i - 1]["cluster"] != b["cluster"]:
            latest = None
        if latest is not None and b["applied_lo"] is not None \
                and b["applied_lo"] < latest - tolerance_us:
            out[f"{b['cluster']}\x00{b['block']}"] = latest
        if b["applied_hi"] is not None:
            latest = b["applied_hi"] if latest is None else max(latest, b["applied_hi"])
    return out


def _requested(blocks: list[Block]) -> tuple[Requested, ...]:
    out = []
    for event_type, change in REQUESTS.items():
        count = sum(b[f"n_{change}"] or 0 for b in blocks)
        if not count:
            continue
        head = [r for b in blocks for r in b[f"first_{change}"] or []][:FIRST]
        first: tuple[Listed, ...] = tuple(
            (r["seq"], r["ts_lo"], r["topic"], r["partition"], r["broker_id"],
             detail(event_type, r["unclean"])) for r in head)
        out.append((change, count, first))
    return tuple(out)


def combine(blocks: list[Block], previous: int | None, applied: int | None) -> SeqFacts:
    """One cluster's facts from its blocks in seq order (`log_checks.cluster_facts`),
    those judged again against the earlier blocks' times already in place."""
    baseline = previous if previous is not None else applied
    late = [(b["late_lo"], b["late_hi"]) for b in blocks if b["late_lo"] is not None]
    backwards = [s for b in blocks for s in b["back_first"]]
    return SeqFacts(
        seq_min=blocks[0]["seq_lo"], seq_max=blocks[-1]["seq_hi"], previous_seq_max=baseline,
        gaps=tuple(_gaps(blocks, baseline)),
        late=(late[0][0], late[-1][1]) if late else None,
        conflicting=tuple(s for b in blocks for s in b["conflicts"]),
        ts_backwards=tuple(backwards[:LISTED]),
        ts_backwards_count=sum(b["back_n"] for b in blocks),
        requested=_requested(blocks),
    )


def log_facts(events: DataFrame, previous: Mapping[str, int], applied: Mapping[str, int],
              tolerance_us: int, ts_range: TsRange = (None, None),
              block_bits: int = BLOCK_BITS) -> dict[str, SeqFacts]:
    """`jobs.engine.log_checks.log_facts` of a DataFrame of event rows, computed by Spark:
    the driver holds one summary per block of seqs."""
    baseline = {**applied, **previous}
    blocks = summaries(events, baseline, applied, tolerance_us, ts_range, block_bits)
    blocks.sort(key=lambda b: (b["cluster"], b["block"]))
    again = recheck(blocks, tolerance_us)
    if again:  # time runs backwards across blocks: those blocks' backwards seqs again
        judged = {(b["cluster"], b["block"]): b for b in summaries(
            events, baseline, applied, tolerance_us, ts_range, block_bits, before=again)}
        for b in blocks:
            if (b["cluster"], b["block"]) in judged:
                b.update(back_n=judged[b["cluster"], b["block"]]["back_n"],
                         back_first=judged[b["cluster"], b["block"]]["back_first"])
    by_cluster: dict[str, list[Block]] = {}
    for b in blocks:
        by_cluster.setdefault(b["cluster"], []).append(b)
    return {c: combine(bs, previous.get(c), applied.get(c)) for c, bs in by_cluster.items()}
