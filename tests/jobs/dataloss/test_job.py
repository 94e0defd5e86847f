"""`data_loss` end to end, as an operator gets it: `jobs.ingest --logs broker-1/ broker-2/`
over the hand-made histories (tests/fixtures/dataloss), then `jobs.replay`, which finds the
ingest's `offset_evidence` beside the events it is given and writes the figure; then
`python -m jobs.dataloss` over the same run with the broker logs of the history whose
truncation lines are missing, which gives the bounds. Both modes; a bad `--offset-evidence`
is refused before the replay spends its time.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

from jobs.audit import job as audit
from jobs.dataloss import job as dataloss
from jobs.ingest import job as ingest
from jobs.replay import job as replay
from tests.helpers import FIXTURES

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ZK = FIXTURES / "dataloss" / "zk-ak3.7"
KRAFT = FIXTURES / "dataloss" / "kraft-ak3.9"


def _rows(tables: Path, run_id: str) -> list[dict[str, Any]]:
    found = ds.dataset(tables / "data_loss", partitioning="hive", format="parquet")
    return [r for r in found.to_table().to_pylist() if str(r["run_id"]) == run_id]


def _brokers_without_truncation(folder: Path, tmp: Path) -> Path:
    copy = tmp / f"{folder.name}-no-truncation"
    shutil.copytree(folder, copy)
    for p in copy.rglob("*.log"):
        p.write_text("".join(x for x in p.read_text().splitlines(keepends=True)
                             if "Truncating" not in x))
    return copy


def _figures(row: dict[str, Any]) -> tuple[object, ...]:
    return (row["cluster"], row["topic"], row["partition"], row["result"], row["messages_lost"],
            row["messages_lost_at_least"], row["messages_lost_at_most"], row["new_leader"],
            row["leader_epoch"], row["new_leader_end_offset"], row["old_leader"],
            row["old_leader_end_offset"], row["old_leader_final_end_offset"])


def test_zookeeper_history_from_the_logs_to_data_loss(spark: Any, tmp_path: Path,
                                                     capsys: Any) -> None:
    out = tmp_path / "ingest"
    assert ingest.main(["--logs", str(ZK / "broker-1"), str(ZK / "broker-2"), "--out",
                        str(out)], spark=spark) == 0
    tables = tmp_path / "tables"
    assert replay.main(["--events", str(out / "events"), "--out", str(tables), "--run-id",
                        "r1"], spark=spark) == 0
    [row] = _rows(tables, "r1")
    assert _figures(row) == ("default", "orders", 0, "exact", 100, None, None, 2, 2, 1000, 1,
                             1000, 1100)
    assert row["incident_id"] == 4  # the BrokerFailure of broker 1 that took it offline
    assert [(t["broker_id"], t["truncated_to"], t["log_end_offset"], t["messages_lost"])
            for t in row["truncations"]] == [(1, 1000, 1100, 100)]
    assert [e["source"] for e in row["evidence"]] == [
        "broker-2/state-change.log:3", "broker-2/state-change.log:4", "broker-1/server.log:2",
        "broker-1/state-change.log:2", "broker-1/server.log:7", "broker-1/server.log:8"]
    assert all(e["text"].startswith("[2026-03-02 ") for e in row["evidence"])

    # The audit's check carries the figure, and its post-mortem says it under the incidents.
    capsys.readouterr()
    assert audit.main(["--tables", str(tables), "--run-id", "r1", "--fail-on", "never"],
                      spark=spark) == 0
    [check] = [r for r in ds.dataset(tables / "audit_checks", partitioning="hive",
                                     format="parquet").to_table().to_pylist()
               if r["check"] == "unclean_election"]
    assert check["detail"] == (
        "at seq 5: orders-0 elected 2, which was not in the ISR; data may be lost; data loss: "
        "100 messages lost on orders-0: broker 1 truncated to 1000 from log end offset 1100 "
        "(broker 2 elected at leader epoch 2 with log end offset 1000 and high watermark 980; "
        "old leader broker 1); proof: broker-2/state-change.log:3, "
        "broker-2/state-change.log:4, broker-1/server.log:2 and 3 more")
    out = capsys.readouterr().out.splitlines()
    at = out.index("  data loss of the unclean elections (from the brokers' logs):")
    assert out[at + 1].startswith("    seq 5 (incident at seq 4): 100 messages lost on orders-0")

    # After the fact: the same run judged with broker logs that lack the truncation lines.
    other = tmp_path / "ingest-other"
    cut = _brokers_without_truncation(ZK, tmp_path)
    assert ingest.main(["--logs", str(cut / "broker-1"), str(cut / "broker-2"), "--out",
                        str(other)], spark=spark) == 0
    assert dataloss.main(["--tables", str(tables), "--run-id", "r1", "--offset-evidence",
                          str(other / "offset_evidence")], spark=spark) == 0
    [row] = _rows(tables, "r1")
    assert _figures(row) == ("default", "orders", 0, "bounded", None, 100, 120, 2, 2, 1000, 1,
                             1000, 1100)


def test_kraft_history_from_the_logs_to_data_loss(spark: Any, tmp_path: Path) -> None:
    """The metadata log (kafka-dump-log text) and the brokers' and the controller's logs in
    one ingest; the replay of `--events out/ingest` (its KRaft input) finds the evidence in
    the same folder. The controller's `Setting new leader for topicId ..` line names the
    topic by id only: the evidence's other lines give its name."""
    out = tmp_path / "ingest"
    assert ingest.main(["--logs", str(KRAFT), "--out", str(out)], spark=spark) == 0
    tables = tmp_path / "tables"
    assert replay.main(["--events", str(out), "--out", str(tables), "--run-id", "k1"],
                       spark=spark) == 0
    [row] = _rows(tables, "k1")
    assert _figures(row) == ("default", "orders", 0, "exact", 100, None, None, 2, 2, 1000, 1,
                             1000, 1100)
    assert row["seq"] == 11 and row["old_isr"] == [1]
    # The controller logs the election before the record's own time: they are read between
    # the partition's write before it and the next leader's.
    assert [e["source"] for e in row["evidence"] if e["role"] == "election"] == [
        "controller-3000/controller.log:3", "controller-3000/controller.log:4",
        "controller-3000/controller.log:5", "broker-2/state-change.log:3"]


def test_an_offset_evidence_that_is_no_such_table_is_refused(spark: Any, tmp_path: Path,
                                                             capsys: Any) -> None:
    out = tmp_path / "ingest"
    assert ingest.main(["--logs", str(ZK), "--out", str(out)], spark=spark) == 0
    rc = replay.main(["--events", str(out / "events"), "--out", str(tmp_path / "t"),
                      "--offset-evidence", str(out / "events")], spark=spark)
    assert rc == 2
    assert "is not jobs.ingest's offset_evidence table" in capsys.readouterr().err
    assert not (tmp_path / "t" / "run_summary").exists()
    assert dataloss.main(["--tables", str(tmp_path / "t"), "--run-id", "x",
                          "--offset-evidence", str(out / "offset_evidence")], spark=spark) == 2
    assert "run x not found under" in capsys.readouterr().err
