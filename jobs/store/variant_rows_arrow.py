"""A what-if variant's whole tables read with pyarrow alone (no Spark: the what-if's driver
stages, the report, the tests). The rule is `jobs.store.variant_rows`'."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from jobs.store.variant_rows import ALL_TABLES, SHARING
from schemas.arrow import arrow_schema
from schemas.whatif import SHARED_EVENT_KEYS, SHARED_STATE_TABLES

_RUN_PARTITIONING = ds.partitioning(pa.schema([("run_id", pa.string())]), flavor="hive")
# INT96 timestamps (Spark's default) read as microseconds: nanoseconds overflow past 2262.
_FORMAT = ds.ParquetFileFormat(read_options={"coerce_int96_timestamp_unit": "us"})
KEY_COLUMNS = ("cluster", "variant", "topic", "partition")


def stored_arrow(out_dir: str | Path, table: str, run_id: str,
                 where: pc.Expression | None = None,
                 columns: Sequence[str] | None = None) -> pa.Table:
    """The rows of `table` the run stores that meet `where`, as stored (`columns`)."""
    schema = arrow_schema(ALL_TABLES[table])
    path = Path(out_dir) / table
    names = list(columns) if columns is not None else schema.names
    if not path.is_dir():
        return schema.empty_table().select(names)
    found = pc.field("run_id") == run_id
    if where is not None:
        found = found & where
    return ds.dataset(str(path), schema=schema, format=_FORMAT,
                      partitioning=_RUN_PARTITIONING).to_table(columns=names, filter=found)


def _variants(variants: Sequence[str] | None) -> pc.Expression | None:
    return None if variants is None else pc.field("variant").isin(list(variants))


def _both(a: pc.Expression | None, b: pc.Expression | None) -> pc.Expression | None:
    return b if a is None else a if b is None else a & b


def arrow_variant_table(out_dir: str | Path, table: str, run_id: str,
                        variants: Sequence[str] | None = None,
                        where: pc.Expression | None = None,
                        columns: Sequence[str] | None = None) -> pa.Table:
    """`read_variant_table` with pyarrow: `table` of the what-if run `run_id`, every
    variant's (or `variants`') rows whole, those that meet `where` (an expression on the
    table's columns), with `columns` (all by default)."""
    names = list(columns) if columns is not None else arrow_schema(ALL_TABLES[table]).names
    shared = table in SHARED_EVENT_KEYS or table in SHARED_STATE_TABLES
    needed = list(dict.fromkeys([*names, *KEY_COLUMNS, *(
        [SHARED_EVENT_KEYS[table]] if table in SHARED_EVENT_KEYS else [])])) if shared \
        else names
    own = stored_arrow(out_dir, table, run_id, _both(_variants(variants), where), needed)
    if not shared:
        return own.select(names)
    sharing = stored_arrow(out_dir, SHARING, run_id, _variants(variants))
    if sharing.num_rows == 0:
        return own.select(names)
    buckets = set(sharing.column("buckets").to_pylist())
    if len(buckets) != 1:
        raise ValueError(f"whatif_sharing of run {run_id} names bucket counts {buckets}")
    bases = sorted(set(sharing.column("base").to_pylist()))
    base = stored_arrow(out_dir, table, run_id, _both(pc.field("variant").isin(bases), where),
                        needed)
    bucket = _buckets(base, buckets.pop())
    parts = [own.select(names)]
    for (cluster, variant), rows in _by_variant(sharing).items():
        mask = _taken(table, base, bucket, cluster, rows)
        if table in SHARED_STATE_TABLES:
            skip = _overridden(out_dir, run_id, cluster, variant, rows)
            mask = pc.and_(mask, pc.invert(pc.is_in(_partition_key(base), value_set=skip)))
        taken = base.filter(mask).select(names)
        if "variant" in names:
            taken = taken.set_column(names.index("variant"), "variant",
                                     pa.array([variant] * taken.num_rows, pa.string()))
        parts.append(taken)
    return pa.concat_tables(parts)


def _by_variant(sharing: pa.Table) -> dict[tuple[str, str], list[dict[str, object]]]:
    found: dict[tuple[str, str], list[dict[str, object]]] = {}
    for row in sharing.to_pylist():
        found.setdefault((str(row["cluster"]), str(row["variant"])), []).append(row)
    return found


def _buckets(rows: pa.Table, buckets: int) -> pa.Array:
    """Each row's replay group: `statemachine.replay.bucket_of` of its cluster and topic,
    computed once per distinct (cluster, topic); null for a row without a topic."""
    pairs = pc.binary_join_element_wise(rows.column("cluster"), rows.column("topic"), "\x00")
    if isinstance(pairs, pa.ChunkedArray):
        pairs = pairs.combine_chunks()
    encoded = pc.dictionary_encode(pairs)
    values = [zlib.crc32(p.encode()) % buckets for p in encoded.dictionary.to_pylist()]
    return pc.take(pa.array(values, pa.int32()), encoded.indices)


def _taken(table: str, base: pa.Table, bucket: pa.Array, cluster: str,
           rows: list[dict[str, object]]) -> pa.Array:
    """The base's rows the variant of `rows` (its whatif_sharing rows) takes: every row of
    a group it takes whole; of a group it left at a cut, a state table's rows (less the
    partitions it overrides) and a per-event table's rows below the cut."""
    def buckets_of(selected: list[int]) -> pa.Array:
        return pc.is_in(bucket, value_set=pa.array(selected, pa.int32()))

    of_base = pc.and_kleene(pc.equal(base.column("cluster"), cluster),
                      pc.equal(base.column("variant"), str(rows[0]["base"])))
    cut = {int(str(r["bucket"])): int(str(r["before_seq"])) for r in rows
           if r["before_seq"] is not None}
    whole = [int(str(r["bucket"])) for r in rows if r["before_seq"] is None]
    if table in SHARED_EVENT_KEYS and cut:
        limits = pa.array([cut.get(b) for b in range(max(cut) + 1)], pa.int64())
        below = pc.less(base.column(SHARED_EVENT_KEYS[table]),
                        pc.take(limits, pc.min_element_wise(bucket, len(limits) - 1)))
        taken = pc.or_kleene(buckets_of(whole), pc.and_kleene(buckets_of(sorted(cut)), below))
    else:
        taken = buckets_of([*whole, *cut])
    return pc.fill_null(pc.and_kleene(of_base, taken), False)


def _partition_key(rows: pa.Table) -> pa.Array:
    return pc.binary_join_element_wise(
        rows.column("topic"), pc.cast(rows.column("partition"), pa.string()), "\x00")


def _overridden(out_dir: str | Path, run_id: str, cluster: str, variant: str,
                rows: list[dict[str, object]]) -> pa.Array:
    """The partitions whose state rows the variant stores itself or removed."""
    where = (pc.field("cluster") == cluster) & (pc.field("variant") == variant)
    keys = [_partition_key(stored_arrow(out_dir, t, run_id, where, ["topic", "partition"]))
            for t in SHARED_STATE_TABLES]
    removed = [f"{p['topic']}\x00{p['partition']}" for r in rows
               for p in (r["removed"] or [])]  # type: ignore[attr-defined]
    return pa.concat_arrays([*(k.combine_chunks() if isinstance(k, pa.ChunkedArray) else k
                               for k in keys), pa.array(removed, pa.string())]).unique()
