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

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from jobs.engine.log_checks import CONTENT, FAMILY, LISTED, SeqFacts
from jobs.engine.requested import FIRST, REQUESTS, Listed, Requested, detail
from schemas import event_types as ET
from schemas.events import EVENT_SCHEMA

BLOCK_BITS = 14  # 16,384 seqs per block: a block is one task's, its lists bounded
SCOPE = ("cluster", "block", "seq", "event_type", "broker_id", "topic", "partition")
LIST_COLUMNS = {f.name for f in EVENT_SCHEMA.fields if f.dataType.typeName() == "array"}
Block = dict[str, Any]
TsRange = tuple[int | None, int | None]


def _text(name: str) -> Column:
    """A content column as the fingerprint's text (`log_checks._as_text`): lists joined
    with "," (null when an element is, as pyarrow's `binary_join`), times as microseconds,
    nulls as "-"."""
    col = F.col(name)
    if name in LIST_COLUMNS:
        joined = F.array_join(F.transform(col, lambda x: x.cast("string")), ",")
        text = F.when(F.exists(col, lambda x: x.isNull()), F.lit(None)).otherwise(joined)
    elif name == "ts":
        text = F.unix_micros(col).cast("string")
    else:
        text = col.cast("string")
    return F.coalesce(text, F.lit("-"))


def _family() -> Column:
    """The event family of a row (`log_checks.FAMILY`, else its own type)."""
    out = F.col("event_type")
    for event_type, family in FAMILY.items():
        out = F.when(F.col("event_type") == event_type, F.lit(family)).otherwise(out)
    return out


def _lookup(values: Mapping[str, int]) -> Column:
    """Per cluster, its value in `values` as a literal (null for a cluster without one)."""
    if not values:
        return F.lit(None).cast("long")
    pairs = [x for c, v in sorted(values.items()) for x in (F.lit(c), F.lit(v).cast("long"))]
    return F.create_map(*pairs)[F.col("cluster")]


def _block_key() -> Column:
    return F.concat_ws("\x00", F.col("cluster"), F.col("block").cast("string"))


def _rows(events: DataFrame, block_bits: int, ts_range: TsRange) -> DataFrame:
    """The rows with a usable seq, narrowed to what the checks read."""
    ts = F.unix_micros(F.col("ts"))
    low, high = ts_range
    plausible = F.lit(True)
    if low is not None:
        plausible = plausible & (ts >= low)
    if high is not None:
        plausible = plausible & (ts <= high)
    return events.where(F.col("seq").isNotNull() & (F.col("seq") >= 0)).select(
        F.coalesce(F.col("cluster"), F.lit(ET.DEFAULT_CLUSTER)).alias("cluster"),
        F.shiftright(F.col("seq"), block_bits).alias("block"),
        "seq", "event_type", "broker_id", "topic", "partition", ts.alias("ts_us"),
        F.when(plausible, ts).alias("applied_ts"),
        F.concat_ws("|", *[_text(c) for c in CONTENT]).alias("fingerprint"),
        # The setting of a TopicConfigChanged: the first one given, in read order
        # (pyarrow's "first" of `jobs.engine.requested`).
        F.when((F.col("event_type") == ET.TOPIC_CONFIG_CHANGED)
               & F.col("unclean_leader_election").isNotNull(),
               F.struct(F.col("_metadata.file_path").alias("file"),
                        F.col("_metadata.row_index").alias("row"),
                        F.col("unclean_leader_election").alias("unclean"))).alias("config"),
    )


def _scopes(rows: DataFrame, applied: Mapping[str, int]) -> DataFrame:
    """One row per scope, after one shuffle by (cluster, block)."""
    return rows.repartition("cluster", "block").groupBy(*SCOPE).agg(
        (F.min("fingerprint") != F.max("fingerprint")).alias("contents_differ"),
        F.min("ts_us").alias("ts_lo"), F.max("ts_us").alias("ts_hi"),
        F.min("applied_ts").alias("applied_lo"), F.max("applied_ts").alias("applied_hi"),
        F.min("config").alias("config"),
    ).withColumn("on_time", F.col("seq") > F.coalesce(_lookup(applied), F.lit(-1))) \
        .withColumn("family", _family())


def _seqs(scopes: DataFrame, baseline: Mapping[str, int], applied: Mapping[str, int],
          tolerance_us: int, before: Mapping[str, int]) -> DataFrame:
    """One row per seq, with the window's previous beyond-baseline seq and whether its time
    runs backwards (`before`: per block key, the latest applied time of the blocks before)."""
    seqs = scopes.groupBy("cluster", "block", "seq").agg(
        (F.coalesce(F.min("family") != F.max("family"), F.lit(False))
         | F.max("contents_differ")).alias("conflict"),
        F.min("applied_lo").alias("applied_lo"), F.max("applied_hi").alias("applied_hi"))
    # A conflicting seq is quarantined whole: its times are not applied.
    seqs = seqs.withColumn("applied_lo", F.when(~F.col("conflict"), F.col("applied_lo"))) \
        .withColumn("applied_hi", F.when(~F.col("conflict"), F.col("applied_hi")))
    base = _lookup(baseline)
    earlier = Window.partitionBy("cluster", "block").orderBy("seq") \
        .rowsBetween(Window.unboundedPreceding, -1)
    beyond = F.when(base.isNull() | (F.col("seq") > base), F.col("seq"))
    latest = F.max("applied_hi").over(earlier)
    if before:
        pairs = [x for k, v in sorted(before.items()) for x in (F.lit(k), F.lit(v))]
        latest = F.greatest(latest, F.create_map(*pairs)[_block_key()])
    return seqs.select(
        "*", beyond.alias("beyond"), F.max(beyond).over(earlier).alias("prev_beyond"),
        F.when(F.col("seq") <= _lookup(applied), F.col("seq")).alias("late"),
        F.coalesce(F.col("applied_lo") < latest - F.lit(tolerance_us), F.lit(False))
        .alias("back"),
    )


def _blocks(seqs: DataFrame) -> DataFrame:
    """One row per block: its ranges, and its lists (each sorted)."""
    gap = F.when(F.col("beyond").isNotNull() & (F.col("seq") > F.col("prev_beyond") + 1),
                 F.array(F.col("prev_beyond") + 1, F.col("seq") - 1))
    return seqs.groupBy("cluster", "block").agg(
        F.min("seq").alias("seq_lo"), F.max("seq").alias("seq_hi"),
        F.min("beyond").alias("beyond_lo"), F.max("beyond").alias("beyond_hi"),
        F.min("late").alias("late_lo"), F.max("late").alias("late_hi"),
        F.min("applied_lo").alias("applied_lo"), F.max("applied_hi").alias("applied_hi"),
        F.array_sort(F.collect_list(F.when(F.col("conflict"), F.col("seq"))))
        .alias("conflicts"),
        F.array_sort(F.collect_list(gap)).alias("gaps"),
        F.count(F.when(F.col("back"), 1)).alias("back_n"),
        F.slice(F.array_sort(F.collect_list(F.when(F.col("back"), F.col("seq")))), 1, LISTED)
        .alias("back_first"),
    )


def _requests(scopes: DataFrame) -> DataFrame:
    """Per block, per requesting event type: its distinct on-time scopes counted, and the
    first ones in (seq, topic, partition) order, nulls last (`jobs.engine.requested`)."""
    aggs = []
    for event_type, change in REQUESTS.items():
        mine = F.col("on_time") & (F.col("event_type") == event_type)
        listed = F.struct(
            F.col("seq"), F.col("topic").isNull().alias("no_topic"), F.col("topic"),
            F.col("partition").isNull().alias("no_partition"), F.col("partition"),
            F.col("broker_id").isNull().alias("no_broker"), F.col("broker_id"),
            F.col("ts_lo"), F.col("config.unclean").alias("unclean"))
        aggs += [F.count(F.when(mine, 1)).alias(f"n_{change}"),
                 F.slice(F.array_sort(F.collect_list(F.when(mine, listed))), 1, FIRST)
                 .alias(f"first_{change}")]
    return scopes.groupBy("cluster", "block").agg(*aggs)


def summaries(events: DataFrame, baseline: Mapping[str, int], applied: Mapping[str, int],
              tolerance_us: int, ts_range: TsRange = (None, None),
              block_bits: int = BLOCK_BITS, before: Mapping[str, int] | None = None
              ) -> list[Block]:
    """The rows of the blocks (one Spark job, one shuffle of the rows with a usable seq);
    with `before`, of those blocks only (keyed by `_block_key`)."""
    rows = _rows(events, block_bits, ts_range)
    if before:
        rows = rows.where(_block_key().isin(*sorted(before)))
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
