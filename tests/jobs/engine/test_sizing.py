"""A small log's session: the JVM sized for seconds of work, and one stateful task per core
only where no checkpoint keeps the shuffle partitions (`jobs.engine.sizing`)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.engine.sizing import SMALL_JVM_OPTIONS, SMALL_LOG_ROWS, log_rows, small_log_settings

LOG4J = "-Dlog4j2.configurationFile=conf/spark/log4j2.properties"


def _files(directory: Path, rows_per_file: list[int]) -> Path:
    directory.mkdir()
    for i, rows in enumerate(rows_per_file):
        pq.write_table(pa.table({"seq": list(range(rows))}), directory / f"part-{i}.parquet")
    (directory / "_counts.json").write_text("{}")  # hidden from readers: not counted
    return directory


def test_rows_come_from_the_footers(tmp_path: Path) -> None:
    assert log_rows(str(_files(tmp_path / "log", [3, 4, 5]))) == 12


def test_counting_stops_once_the_log_is_not_small(tmp_path: Path) -> None:
    log = _files(tmp_path / "log", [6, 6, 6, 6])
    assert log_rows(str(log), limit=10) == 12


def test_a_small_log_on_a_temporary_checkpoint_gets_one_task_per_core() -> None:
    settings = small_log_settings(6_000, None, temporary_checkpoint=True, java_options=LOG4J)
    cores = str(os.cpu_count() or 1)
    assert settings == {
        "spark.driver.extraJavaOptions": f"{LOG4J} {SMALL_JVM_OPTIONS}",
        "spark.sql.shuffle.partitions": cores,
        "spark.default.parallelism": cores,
    }


def test_options_the_configuration_already_gives_are_not_repeated() -> None:
    configured = f"{LOG4J} -XX:TieredStopAtLevel=1"
    settings = small_log_settings(6_000, None, temporary_checkpoint=False,
                                  java_options=configured)
    assert settings == {"spark.driver.extraJavaOptions":
                        f"{configured} -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"}


def test_a_checkpoint_keeps_its_shuffle_partitions() -> None:
    settings = small_log_settings(6_000, "local[2]", temporary_checkpoint=False)
    assert settings == {"spark.driver.extraJavaOptions": SMALL_JVM_OPTIONS}


def test_large_logs_unknown_sizes_and_clusters_keep_the_configuration() -> None:
    assert small_log_settings(SMALL_LOG_ROWS + 1, None, True) == {}
    assert small_log_settings(None, None, True) == {}
    assert small_log_settings(6_000, "spark://master:7077", True) == {}
