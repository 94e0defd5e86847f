"""The log's facts (`jobs.whatif.facts`), gathered from the log's record batches one at a
time: what the driver keeps of each batch does not depend on how the log is cut into them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from jobs.whatif.facts import COLUMNS, LogError, LogFacts, facts_of_batches, facts_of_table
from schemas import event_types as ET
from schemas.whatif import VARIANT_SEPARATOR
from tests.helpers.event_log import ARROW_EVENT_SCHEMA, created, ev, failover
from tests.jobs.whatif.conftest import small_log_rows


def needed(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=ARROW_EVENT_SCHEMA).select(list(COLUMNS))


def summary(facts: LogFacts) -> dict[str, Any]:
    return {name: (c.brokers, c.topics, c.seqs.tolist(), c.times.tolist(),
                   c.rows.to_pydict(), c.broker_events) for name, c in facts.clusters.items()}


def test_facts_are_the_same_however_the_log_is_cut_into_batches() -> None:
    rows = small_log_rows()  # no cluster: the default one
    rows += [created(7, "x", 0, [8, 9], cluster="east"), failover(6, 8, [8, 9], cluster="east"),
             ev(None, ET.ISR_CHANGED, topic="y", partition=0, isr=[7], cluster="east"),
             ev(3, "NotAnEvent", topic="z", broker_id=4, cluster="east"),
             created(6, "x", 1, [9], cluster="east")]
    table = needed(rows)
    whole = facts_of_table(table)
    one_by_one = facts_of_batches(table.to_batches(max_chunksize=1))
    assert summary(one_by_one) == summary(whole)
    east = one_by_one.clusters["east"]
    assert east.brokers == {4, 7, 8, 9}  # every row names brokers, timed or not
    assert east.topics == {"x", "y", "z"}
    assert east.seqs.tolist() == [6, 6, 7]  # timed, known events only, in seq order
    assert east.rows.column("topic").to_pylist() == [None, "x", "x"]  # stable within a seq
    assert [e.seq for e in east.broker_events] == [6]
    assert np.array_equal(one_by_one.clusters[ET.DEFAULT_CLUSTER].seqs,
                          sorted(r["seq"] for r in small_log_rows()))


def test_a_cluster_name_holding_the_separator_is_refused_whichever_batch_holds_it() -> None:
    late, first = f"b{VARIANT_SEPARATOR}late", f"a{VARIANT_SEPARATOR}first"
    rows = [created(2, "a", 0, [1], cluster=late), created(1, "a", 0, [1], cluster=first)]
    with pytest.raises(LogError, match=repr(first)):
        facts_of_batches(needed(rows).to_batches(max_chunksize=1))
