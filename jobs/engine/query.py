"""The streaming query every replay runs (the replay job's, the what-if's): keyed rows ->
packed per group -> `applyInPandasWithState` with the core -> `foreachBatch` sink, over
everything there is (`availableNow`), with its offsets and state under `query_dir`."""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import DataFrame
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.streaming.state import GroupStateTimeout

from jobs.engine.group_fn import ReplayFn
from jobs.engine.pack import pack
from schemas.state import PACKED_SCHEMA, STATE_SCHEMA, TAGGED_SCHEMA


def start_replay_query(rows: DataFrame, replay_fn: ReplayFn,
                       sink: Callable[[DataFrame, int], None], query_dir: str,
                       name: str) -> StreamingQuery:
    tagged = rows.mapInArrow(pack, PACKED_SCHEMA).groupBy("cluster", "bucket") \
        .applyInPandasWithState(replay_fn, TAGGED_SCHEMA, STATE_SCHEMA, "append",
                                GroupStateTimeout.NoTimeout)
    return (
        tagged.writeStream.outputMode("append")
        .foreachBatch(sink)
        .option("checkpointLocation", query_dir)
        .trigger(availableNow=True)
        .queryName(name)
        .start()
    )
