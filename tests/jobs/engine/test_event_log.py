"""The schema check of the event log (`jobs.engine.event_log.check_event_files`): it opens the
path literally, as Spark does, so it checks exactly the files Spark reads (a space or a `%`
in a directory name, `file://` and `file:` forms); a bad file fails it with the file named;
a file system pyarrow cannot open is checked through Spark, never skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import jobs.engine.event_log as source
from jobs.engine.event_log import (
    READ_OPTIONS,
    EventSchemaError,
    NeedsSpark,
    check_event_files,
    check_with_spark,
    event_files,
    spark_event_files,
)
from schemas import event_types as ET
from schemas.events import EVENT_SCHEMA
from tests.helpers.event_log import created, ev, write_log

# A space, a `%41` that a URI parser would decode to `A`, and both.
ODD_NAMES = ["sp ace", "pct%41", "sp ace%41"]


def quiet(_message: str) -> None:
    pass


def the_forms(directory: Path) -> list[str]:
    """The ways a user names a local directory, all read literally by Spark."""
    return [str(directory), f"file://{directory}", f"file:{directory}"]


def write_log_with_hidden_files(directory: Path) -> None:
    write_log(directory, [created(1, "t", 0, [1, 2])])
    write_log(directory / "day=2", [ev(2, ET.BROKER_STARTUP, broker_id=1)], name="part-1")
    # Spark reads a `_` directory holding `=` (a partition) and skips the others.
    write_log(directory / "_p=3", [ev(3, ET.BROKER_STARTUP, broker_id=2)], name="part-2")
    (directory / "_SUCCESS").write_bytes(b"")
    (directory / ".part-0.parquet.crc").write_bytes(b"not parquet")
    (directory / "_temporary").mkdir()
    (directory / "_temporary" / "part-9.parquet").write_bytes(b"half written")


def spark_input_files(spark: Any, given: str) -> set[str]:
    """The files Spark's reader reads for `given`, as local paths."""
    reader = spark.read.schema(EVENT_SCHEMA).options(**READ_OPTIONS)
    return {unquote(urlsplit(uri).path) for uri in reader.parquet(given).inputFiles()}


def drop_ts(path: Path) -> None:
    table = pq.read_table(path)
    pq.write_table(table.drop_columns(["ts"]), path)


# -- pure: pyarrow only --------------------------------------------------------------------

@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_log_under_an_odd_name_is_listed_in_every_form(tmp_path: Path, name: str) -> None:
    directory = tmp_path / name / "events"
    write_log_with_hidden_files(directory)
    expected = sorted(str(p) for p in (directory / "part-0.parquet",
                                       directory / "day=2" / "part-1.parquet",
                                       directory / "_p=3" / "part-2.parquet"))
    for given in the_forms(directory):
        assert event_files(given) == expected, given
        assert check_event_files(given, quiet) == 3, given


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_file_without_ts_under_an_odd_name_fails_the_check(tmp_path: Path,
                                                           name: str) -> None:
    # With the directory opened as a URI this check was skipped (space) or found nothing
    # (`%41` decoded to `A`), and the job then quarantined every row and exited 0.
    directory = tmp_path / name
    bad = write_log(directory, [created(1, "t", 0, [1])])
    drop_ts(bad)
    for given in the_forms(directory):
        with pytest.raises(EventSchemaError) as raised:
            check_event_files(given, quiet)
        assert str(bad) in str(raised.value)
        assert "required column 'ts' is missing" in str(raised.value)


def test_a_missing_directory_is_an_error_and_an_empty_one_an_empty_log(
        tmp_path: Path) -> None:
    with pytest.raises(EventSchemaError, match="events directory .*nowhere does not exist"):
        check_event_files(str(tmp_path / "nowhere"), quiet)
    (tmp_path / "empty" / "_temporary").mkdir(parents=True)
    assert check_event_files(str(tmp_path / "empty"), quiet) == 0


def test_a_column_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    path = write_log(tmp_path, [created(1, "t", 0, [1])])
    table = pq.read_table(path)
    index = table.schema.get_field_index("partition")
    pq.write_table(table.set_column(index, "partition", pa.array(["0"])), path)
    with pytest.raises(EventSchemaError, match=r"part-0.parquet: column 'partition' has type "
                                               r"string, expected int"):
        check_event_files(str(tmp_path), quiet)


@pytest.mark.parametrize("damage", ["truncated", "not parquet"])
def test_a_file_pyarrow_cannot_open_is_named(tmp_path: Path, damage: str) -> None:
    write_log(tmp_path, [created(1, "t", 0, [1])], name="good")
    bad = write_log(tmp_path, [created(2, "t", 1, [1])], name="bad")
    data = bad.read_bytes()
    bad.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"PAR1 or not")
    with pytest.raises(EventSchemaError) as raised:
        check_event_files(str(tmp_path), quiet)
    assert str(raised.value).startswith(f"{bad}: not a readable Parquet file (")


def test_a_scheme_pyarrow_cannot_open_asks_for_spark() -> None:
    # `s3a://` is Hadoop's S3 client: pyarrow has none, so the check cannot run before the
    # SparkSession exists; it is never skipped.
    assert event_files("s3a://bucket/events") is None
    with pytest.raises(NeedsSpark):
        check_event_files("s3a://bucket/events", quiet)


# -- Spark: the files Spark reads, and the check through Spark's Hadoop file system ----------

@pytest.mark.parametrize("name", ODD_NAMES)
def test_the_check_lists_the_files_spark_reads(spark: Any, tmp_path: Path, name: str) -> None:
    directory = tmp_path / name / "events"
    write_log_with_hidden_files(directory)
    for given in the_forms(directory):
        listed = event_files(given)
        assert listed is not None
        assert set(listed) == spark_input_files(spark, given), given
        # Hadoop paths print literally: `file:/dir/sp ace%41/part-0.parquet`.
        by_hadoop = {p.removeprefix("file:") for p in spark_event_files(spark, given)}
        assert by_hadoop == set(listed), given


def test_without_a_pyarrow_client_the_check_goes_through_spark(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Stands for `s3a://` and the like: pyarrow has no client, Hadoop reads the path.
    monkeypatch.setattr(source, "arrow_filesystem", lambda _path: None)
    directory = tmp_path / "sp ace%41"
    write_log_with_hidden_files(directory)
    messages: list[str] = []
    assert check_event_files(str(directory), messages.append, spark=spark) == 3
    assert messages == [f"schema check through Spark: pyarrow cannot list {directory}"]
    drop_ts(directory / "day=2" / "part-1.parquet")
    with pytest.raises(EventSchemaError, match=r"day=2/part-1.parquet: required column 'ts' "
                                               r"is missing"):
        check_event_files(str(directory), quiet, spark=spark)


def test_the_spark_check_names_wrong_types_bad_files_and_a_missing_directory(
        spark: Any, tmp_path: Path) -> None:
    with pytest.raises(EventSchemaError, match="events directory .*nowhere does not exist"):
        check_with_spark(spark, str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    assert check_with_spark(spark, str(tmp_path / "empty")) == 0

    typed = tmp_path / "typed"
    path = write_log(typed, [created(1, "t", 0, [1])])
    table = pq.read_table(path)
    index = table.schema.get_field_index("seq")
    pq.write_table(table.set_column(index, "seq", pa.array([1.0])), path)
    with pytest.raises(EventSchemaError, match=r"part-0.parquet: column 'seq' has type double, "
                                               r"expected bigint"):
        check_with_spark(spark, str(typed))

    globbed = tmp_path / "glob [1]{a,b}*"  # glob characters are part of the name
    write_log(globbed, [created(1, "t", 0, [1])])
    assert check_with_spark(spark, str(globbed)) == 1

    broken = tmp_path / "broken [1]"
    bad = write_log(broken, [created(1, "t", 0, [1])])
    bad.write_bytes(bad.read_bytes()[:100])
    with pytest.raises(EventSchemaError, match=r"part-0.parquet: not a readable Parquet file"):
        check_with_spark(spark, str(broken))
