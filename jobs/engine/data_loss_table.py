"""The run's `data_loss` table: one row per unclean leader election the run found (its
`unclean_leader_election` findings), with what the brokers' own lines say it lost
(`jobs.engine.data_loss`). Thin: small reads with pyarrow on the driver, one write.

Where the lines come from, without a step of the operator's own: the ingest writes
`offset_evidence/` beside `events/` (`jobs.ingest --logs broker-1/ broker-2/ --out
out/ingest` reads every broker's `server.log` with its controller logs), and the replay
looks for it beside the events it was given: `<--events>/offset_evidence` (a KRaft replay's
`--events out/ingest`), then `<--events>/../offset_evidence` (`--events out/ingest/events`).
`--offset-evidence DIR` names it explicitly (server logs ingested apart), and
`python -m jobs.dataloss --tables OUT --offset-evidence DIR [--run-id ID]` recomputes a run's
table after the fact (the old leader's truncation arrived with a later night's logs).
Without any evidence every election still gets its row, `unknown`.

The leadership history of each election's partition comes from `partition_state_writes`
(ZooKeeper mode) or `metadata_writes` (KRaft) of every run of the tables (the old leader
may have been written in an earlier night), its incident from `partition_windows`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from pyspark.sql import types as T

from jobs.engine.data_loss import DataLossRow, Election, Window, Write, compute
from jobs.ingest.logparse.offsets.rows import EvidenceRow
from jobs.store.filesystem import arrow_filesystem, opened, path_exists, unsupported_path_problem
from jobs.store.layout import partition_path, table_path
from jobs.store.tables import parquet_dataset, write_arrow
from schemas.arrow import arrow_schema
from schemas.ingest import OFFSET_EVIDENCE_SCHEMA
from schemas.tables import KRAFT_TABLES, TABLES

EVIDENCE = "offset_evidence"
UNCLEAN = "unclean_leader_election"
PARTITION_RECORDS = ("PartitionRecord", "PartitionChangeRecord")
Log = Callable[[str], object]
Key = tuple[str, str, int]  # cluster, topic, partition

logger = logging.getLogger(__name__)



def find_evidence(events: str, explicit: str | None) -> str | None:
    """The evidence table: the one given, else beside the events (module docstring)."""
    if explicit:
        return explicit
    base = events.rstrip("/")
    parent = base.rsplit("/", 1)[0] if "/" in base else "."
    for candidate in (f"{base}/{EVIDENCE}", f"{parent}/{EVIDENCE}"):
        if path_exists(candidate):
            return candidate
    return None


def evidence_problem(explicit: str | None) -> str | None:
    """An `--offset-evidence` that is not an `offset_evidence` table (exit 2, before the
    replay spends its time)."""
    if not explicit:
        return None
    unsupported = unsupported_path_problem("--offset-evidence", explicit)
    if unsupported is not None:
        return unsupported
    if not path_exists(explicit):
        return f"--offset-evidence {explicit} does not exist"
    try:
        filesystem, inner = opened(explicit)
        names = set(ds.dataset(inner, format="parquet", filesystem=filesystem).schema.names)
    except (OSError, ValueError) as exc:  # not Parquet, empty: pyarrow's errors
        return f"--offset-evidence {explicit} is not a Parquet table: {str(exc).splitlines()[0]}"
    missing = set(OFFSET_EVIDENCE_SCHEMA.fieldNames()) - names
    if missing:
        return (f"--offset-evidence {explicit} is not jobs.ingest's offset_evidence table "
                f"(no column {', '.join(sorted(missing))})")
    return None


def _dataset(path: str, schema: pa.Schema, hive: bool) -> ds.Dataset | None:
    if arrow_filesystem(path) is None:
        return None
    return parquet_dataset(path, schema, "hive" if hive else None)


def read_rows(path: str, schema: T.StructType, columns: Sequence[str],
              where: dict[str, Sequence[Any]], hive: bool = True) -> list[dict[str, Any]]:
    """`columns` of the rows under `path` (every run's, for a table) passing `where`;
    timestamps as UTC microseconds, read with pyarrow (none when there is no such table)."""
    arrow = arrow_schema(schema)
    if not hive:
        arrow = pa.schema([f for f in arrow if f.name != "run_id"])
    found = _dataset(path, arrow, hive)
    if found is None:
        return []
    condition = None
    for column, values in where.items():
        test = pc.field(column).isin(list(values))
        condition = test if condition is None else condition & test
    table = found.to_table(columns=list(columns), filter=condition)
    for i, name in enumerate(table.column_names):
        if pa.types.is_timestamp(table.schema.field(name).type):
            table = table.set_column(i, name, pc.cast(table.column(name), pa.int64()))
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows



def _body(table: str) -> T.StructType:
    return TABLES.get(table) or KRAFT_TABLES[table]


def read_elections(out: str, run_id: str
                   ) -> list[tuple[str, Election]]:
    rows = read_rows(table_path(out, "findings"), TABLES["findings"],
                     ["cluster", "seq", "ts", "topic", "partition", "broker_id", "detail"],
                     {"run_id": [run_id], "kind": [UNCLEAN]})
    return sorted(((r["cluster"], Election(r["seq"], r["ts"] or 0, r["topic"], r["partition"],
                                           r["broker_id"], r["detail"]))
                   for r in rows if r["seq"] is not None and r["topic"] is not None
                   and r["partition"] is not None), key=lambda x: (x[0], x[1].seq, x[1].topic))


def read_writes(out: str, clusters: list[str], topics: list[str]
                ) -> dict[Key, list[Write]]:
    """Every run's leadership writes of these topics (ZooKeeper or KRaft tables)."""
    columns = ["cluster", "topic", "partition", "seq", "ts", "leader", "leader_epoch", "isr"]
    where: dict[str, Sequence[Any]] = {"cluster": clusters, "topic": topics}
    rows = read_rows(table_path(out, "partition_state_writes"),
                     _body("partition_state_writes"), columns, where)
    rows += read_rows(table_path(out, "metadata_writes"), _body("metadata_writes"),
                      columns, {**where, "record_type": PARTITION_RECORDS})
    out_rows: dict[Key, set[Write]] = {}
    for r in rows:
        if r["seq"] is None or r["partition"] is None:
            continue
        isr = tuple(r["isr"]) if r["isr"] is not None else None
        out_rows.setdefault((r["cluster"], r["topic"], r["partition"]), set()).add(
            Write(r["seq"], r["ts"] or 0, r["leader"], r["leader_epoch"], isr))
    return {k: sorted(v) for k, v in out_rows.items()}


def read_windows(out: str, clusters: list[str], topics: list[str]
                 ) -> dict[Key, list[Window]]:
    rows = read_rows(table_path(out, "partition_windows"), TABLES["partition_windows"],
                     ["cluster", "topic", "partition", "kind", "start_seq", "end_seq",
                      "incident_id"], {"cluster": clusters, "topic": topics, "kind": ["offline"]})
    found: dict[Key, set[Window]] = {}
    for r in rows:
        found.setdefault((r["cluster"], r["topic"], r["partition"]), set()).add(
            Window(r["kind"], r["start_seq"], r["end_seq"], r["incident_id"]))
    # A window written open by one run and closed by a later one: the closed one.
    return {k: sorted(v, key=lambda w: (w.start_seq, w.end_seq is None)) for k, v in found.items()}


def _evidence_row(r: dict[str, Any]) -> EvidenceRow:
    values = dict(r)
    for name in ("isr", "previous_isr"):
        values[name] = tuple(r[name]) if r[name] is not None else None
    if r["replica_offsets"] is not None:
        values["replica_offsets"] = tuple((x["broker_id"], x["log_end_offset"])
                                          for x in r["replica_offsets"])
    return EvidenceRow(**{f: values[f] for f in EvidenceRow._fields})


def read_evidence(path: str, clusters: list[str], topics: list[str]
                  ) -> dict[Key, list[EvidenceRow]]:
    """The evidence of these topics, a KRaft controller's lines that name a topic by id
    (`unclean_leader_set`) given their topic by the lines that print both."""
    columns = ["cluster", *EvidenceRow._fields]
    rows = read_rows(path, OFFSET_EVIDENCE_SCHEMA, columns,
                     {"cluster": clusters, "topic": topics}, hive=False)
    by_id = read_rows(path, OFFSET_EVIDENCE_SCHEMA, columns,
                      {"cluster": clusters, "kind": ["unclean_leader_set"]}, hive=False)
    names = {(r["cluster"], r["topic_id"]): r["topic"] for r in rows
             if r["topic_id"] is not None}
    found: dict[Key, list[EvidenceRow]] = {}
    for r in rows + by_id:
        topic = r["topic"] or names.get((r["cluster"], r["topic_id"]))
        if topic is None or r["partition"] is None:
            continue
        found.setdefault((r["cluster"], topic, r["partition"]), []).append(
            _evidence_row({**r, "topic": topic}))
    return found


def data_loss_rows(elections: Iterable[tuple[str, Election]],
                   writes: dict[Key, list[Write]], evidence: dict[Key, list[EvidenceRow]],
                   windows: dict[Key, list[Window]], have_evidence: bool
                   ) -> list[tuple[str, DataLossRow]]:
    out = []
    for cluster, e in elections:
        key = (cluster, e.topic, e.partition)
        row = compute(e, writes.get(key, []), evidence.get(key, []), windows.get(key, []))
        if not have_evidence:
            row = row._replace(detail=row.detail.replace(
                "no offset line of this partition in the broker logs given",
                "no broker offset evidence was given (offset_evidence beside the events, or "
                "--offset-evidence)"))
        out.append((cluster, row))
    return out


def batches(rows: list[tuple[str, DataLossRow]], run_id: str) -> list[pa.RecordBatch]:
    schema = arrow_schema(TABLES["data_loss"])
    dicts = [{"cluster": c, "run_id": run_id, **r._asdict(),
              "truncations": [t._asdict() for t in r.truncations],
              "evidence": [p._asdict() for p in r.evidence]} for c, r in rows]
    return [pa.RecordBatch.from_pylist(dicts, schema=schema)] if dicts else []


def write_data_loss(out: str, run_id: str, evidence: str | None,
                    log: Log = logger.info) -> list[tuple[str, DataLossRow]]:
    """Write the run's `data_loss` (a row per unclean election it found); the rows."""
    elections = read_elections(out, run_id)
    clusters = sorted({c for c, _ in elections})
    topics = sorted({e.topic for _, e in elections})
    found: dict[Key, list[EvidenceRow]] = {}
    if elections and evidence is not None:
        found = read_evidence(evidence, clusters, topics)
    rows = data_loss_rows(elections, read_writes(out, clusters, topics) if elections
                          else {}, found, read_windows(out, clusters, topics)
                          if elections else {}, evidence is not None)
    if rows or not path_exists(partition_path(out, "data_loss", run_id)):
        write_arrow(batches(rows, run_id), out, "data_loss", run_id)
    if elections:
        source = evidence or "none (unknown)"
        log(f"data_loss: {len(rows)} unclean election(s), offset evidence {source}")
        for cluster, r in rows:
            log(f"data_loss: {cluster} {r.detail}")
    return rows

