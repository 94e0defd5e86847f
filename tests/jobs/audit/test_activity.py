"""The activity checks on hand-made controller_timeline rows (no replay)."""

from __future__ import annotations

from datetime import UTC

from pyspark.sql import SparkSession

from jobs.audit.activity import controller_churn
from jobs.audit.extract import AuditInputs, RunBounds
from jobs.audit.options import AuditOptions
from schemas.tables import CONTROLLER_TIMELINE
from tests.helpers.event_log import ts_of


def test_controller_churn_lists_failovers_in_seq_order(spark: SparkSession) -> None:
    """Failovers at seqs 9, 10 and 100 (epochs 2-4 after the first election at seq 1): the
    detail lists them by seq, not as text (which would put 10 and 100 before 9)."""
    rows = [("default", "r1", broker, epoch, seq, ts_of(seq), [1, 2])
            for seq, broker, epoch in ((1, 1, 1), (100, 1, 4), (9, 2, 2), (10, 1, 3))]
    controllers = spark.createDataFrame(rows, CONTROLLER_TIMELINE)
    unused = controllers.limit(0)
    inputs = AuditInputs(
        run_id="r1", partitions=unused, replicas=unused, state_changes=unused,
        leader_and_isr=unused, update_metadata=unused, update_metadata_history=unused,
        stop_replica=unused, findings=unused, windows=unused, brokers=unused,
        controllers=controllers,
        bounds={"default": RunBounds("default", 1, 100, ts_of(100).astimezone(UTC))},
        summary=unused, data_loss=unused)
    [row] = controller_churn(spark, inputs, AuditOptions(max_failovers=2)).collect()
    assert row["detail"] == ("3 controller failovers in the run (> 2): 9:broker 2 (epoch 2), "
                             "10:broker 1 (epoch 3), 100:broker 1 (epoch 4)")
