"""Build the SparkSession the jobs run in (local by default, the cluster under spark-submit).

Settings come, lowest precedence first, from: the defaults below (UTC, RocksDB state store
with changelog checkpointing and its maintenance done by the committing task, dynamic
partition overwrite), a spark-defaults style properties file (`conf/spark/*.conf`),
then an explicit `conf` mapping.

Logging: Spark logs every stage and task at INFO, thousands of lines that bury the jobs'
own progress lines and summary (on stdout). The properties files point the driver at
`conf/spark/log4j2.properties` (warnings and errors only, on stderr); and once the session
has started, the log level is set to `REPLAY_SPARK_LOG_LEVEL` (default WARN), so a run with
any other log4j configuration stays quiet too.

Python workers: unless `PYSPARK_PYTHON` or `spark.pyspark.python` names one, they run the
driver's own interpreter (`choose_worker_python`), so a spark-submit from the venv does not
fall back to a system `python3` without pyarrow.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from jobs.common.uris import scheme_of

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parents[2]
LOG_LEVEL_VARIABLE = "REPLAY_SPARK_LOG_LEVEL"
DEFAULT_LOG_LEVEL = "WARN"
WORKER_PYTHON = "spark.pyspark.python"
LOG_CONFIG_OPTION = re.compile(r"(-Dlog4j2\.configurationFile=)(\S+)")

ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

DEFAULTS: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
    # A state store version writes the rows it changed (a changelog), and the task that
    # committed it uploads the snapshot that is due and removes the versions past the last
    # 8 batches: a run is one short process, gone before Spark's background maintenance
    # would (docs/replay-job.md says why, BENCHMARKS.md what it measured).
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.stateStore.unloadOnCommit": "true",
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "4",
    "spark.sql.streaming.minBatchesToRetain": "8",
    # Re-running a run_id replaces that run's partition of every table, never duplicating rows.
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # Spark 4 sizes each Arrow batch it hands a Python worker (`mapInArrow`, the replay's
    # `pack`) by asking the batch's byte size after every row
    # (`BatchedPythonArrowInput.writeSizedBatch`), unless this limit is Int.MaxValue. With
    # the event rows' list columns the question walks the batch built so far, so the JVM
    # spent most of a replay's CPU on it (BENCHMARKS.md). Batches stay bounded by
    # `spark.sql.execution.arrow.maxRecordsPerBatch` (10,000 rows, a few MB of events).
    "spark.sql.execution.arrow.maxBytesPerBatch": "2147483647",
    # Every command (ingest and compare too, which read no properties file) runs from cron:
    # Spark's progress bars would fill its logs with carriage-returned lines.
    "spark.ui.showConsoleProgress": "false",
}


def read_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Parse a spark-defaults style file: `key value` (or `key=value`) per line, `#` comments."""
    props: dict[str, str] = {}
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(" ")
        if "=" in key and not sep:
            key, _, value = line.partition("=")
        elif "=" in key:
            key, _, rest = key.partition("=")
            value = rest + sep + value
        props[key.strip()] = value.strip()
    return props


def absolute_log_config(java_options: str) -> str:
    """`-Dlog4j2.configurationFile=conf/spark/log4j2.properties` with the file made a `file:`
    URI of the repository's copy. log4j resolves a relative path against the driver's
    working directory, so `python -m jobs.replay` started anywhere but the repository root
    would silently fall back to Spark's INFO default. Absolute paths, URIs and files the
    repository does not have are left as given."""
    def absolute(match: re.Match[str]) -> str:
        location = match.group(2)
        if scheme_of(location) or Path(location).is_absolute():
            return match.group(0)
        candidate = ROOT / location
        if not candidate.is_file():
            return match.group(0)
        return match.group(1) + candidate.as_uri()  # as_uri quotes spaces in the path

    return LOG_CONFIG_OPTION.sub(absolute, java_options)


def under_spark_submit() -> bool:
    """True when the Python driver was launched by spark-submit (it hands over a gateway)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def choose_worker_python(settings: dict[str, str]) -> str | None:
    """Point the Python workers at an interpreter with pandas and pyarrow.

    Spark's default is `python3` from the executor's PATH, on most machines the system
    Python, where the first Arrow UDF dies on `import pyarrow`. When the user named one
    (`PYSPARK_PYTHON`, or `spark.pyspark.python`, which spark-submit hands the driver as
    `PYSPARK_PYTHON`), it is kept; otherwise the driver's own interpreter (the venv's) is
    set, in `settings` and in `PYSPARK_PYTHON`, the variable PySpark's SparkContext reads
    when it ships a UDF. Returns the interpreter chosen, None when the user's is kept."""
    configured = os.environ.get("PYSPARK_PYTHON") or settings.get(WORKER_PYTHON)
    if configured:
        os.environ.setdefault("PYSPARK_PYTHON", configured)
        return None
    settings[WORKER_PYTHON] = sys.executable
    os.environ["PYSPARK_PYTHON"] = sys.executable
    return sys.executable


def build_session(
    app_name: str,
    master: str | None = None,
    conf: Mapping[str, str] | str | os.PathLike[str] | None = None,
    properties_file: str | os.PathLike[str] | None = None,
) -> SparkSession:
    """Return a SparkSession (an active one is reused, its runtime settings updated).

    `conf` is a mapping of settings or the path of a properties file. Without `master`, a
    spark-submit run uses the master it was given and a plain `python -m` run uses
    `local[*]`.
    """
    from pyspark.sql import SparkSession

    settings = dict(DEFAULTS)
    if properties_file is not None:
        settings.update(read_properties(properties_file))
    if isinstance(conf, (str, os.PathLike)):
        settings.update(read_properties(conf))
    elif conf is not None:
        settings.update(conf)
    if "spark.driver.extraJavaOptions" in settings:
        settings["spark.driver.extraJavaOptions"] = absolute_log_config(
            settings["spark.driver.extraJavaOptions"])

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    chosen = choose_worker_python(settings)
    if chosen is not None:
        log.info(f"{WORKER_PYTHON}={chosen}: the driver's own interpreter (neither "
              f"PYSPARK_PYTHON nor {WORKER_PYTHON} is set; set one when the executors' "
              "Python lives elsewhere)")
    if master is None:
        master = settings.pop("spark.master", None)
        if master is None and not under_spark_submit():
            master = "local[*]"
    else:
        settings.pop("spark.master", None)

    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get(LOG_LEVEL_VARIABLE, DEFAULT_LOG_LEVEL))
    return session


def configured_properties(cfg: Mapping[str, object], cfg_path: Path | None) -> Path | None:
    """The config file's `spark_conf` properties file, for a local run (under
    spark-submit, spark-submit passes its own): relative to the repository root the
    config file sits in (`conf/replay.toml` -> the root)."""
    from jobs.common.config import find_file

    if under_spark_submit() or not cfg.get("spark_conf"):
        return None
    base = cfg_path.parent.parent if cfg_path else None
    return find_file(str(cfg["spark_conf"]), base)


def session_for_config(cfg: Mapping[str, object], cfg_path: Path | None,
                       master: str | None) -> SparkSession:
    """The session a replay builds: the config file's properties for a local run."""
    return build_session("kafka-controller-replay", master=master,
                         properties_file=configured_properties(cfg, cfg_path))
