"""A small hand-made log for the what-if tests (brokers 1-3, ts = T0 + seq seconds).

* seq 1   ControllerFailover -> broker 1, live [1,2,3]
* seq 2   topic `a`: 0, 1, 2 -> [1,2]; seq 3 `b` 0 -> [2,3]; seq 4 `c` 0 -> [3];
  seq 5 `e` 0 -> [2,3]
* seq 10  the ISR of a-0, a-1, a-2 shrinks to [1]; seq 11 b-0 and e-0 to [2]
* seq 100 topic `d` 0 -> [1,2,3] (the log's last event: T0 + 100 s)

So broker 1 is the only in-sync replica of 3 partitions, broker 2 of 2, broker 3 of 1 (c-0,
a single replica).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schemas import event_types as ET
from tests.helpers.event_log import created, ev, failover, write_log


def small_log_rows() -> list[dict[str, Any]]:
    rows = [failover(1, 1, [1, 2, 3])]
    rows += [created(2, "a", p, [1, 2]) for p in range(3)]
    rows += [created(3, "b", 0, [2, 3]), created(4, "c", 0, [3]), created(5, "e", 0, [2, 3])]
    rows += [ev(10, ET.ISR_CHANGED, topic="a", partition=p, isr=[1], leader_epoch=0)
             for p in range(3)]
    rows += [ev(11, ET.ISR_CHANGED, topic=t, partition=0, isr=[2], leader_epoch=0)
             for t in ("b", "e")]
    rows.append(created(100, "d", 0, [1, 2, 3]))
    return rows


@pytest.fixture(scope="module")
def small_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("small-log")
    write_log(path, small_log_rows())
    return path
