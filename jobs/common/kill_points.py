"""Named points where the crash tests stop the driver the way a kill would.

With `REPLAY_KILL_AT=<point>` in its environment, the job kills its whole process group
(the Python driver, the JVM it started and the Python workers) with SIGKILL when it reaches
`<point>`: no `finally`, no cleanup, exactly what `kill -9` of a running job leaves. Without
the variable, `reached` costs a dictionary lookup. The points, in the order a run reaches
them: `batch_written` (a batch's tables and ledger record written, Spark has not committed
it), `query_committed` (Spark committed every batch), `summary_written` (`run_summary`
written), `history_saved` (the checkpoint's history replaced; the run marker is next).
"""

from __future__ import annotations

import os
import signal

ENV = "REPLAY_KILL_AT"
POINTS = ("batch_written", "query_committed", "summary_written", "history_saved")


def reached(point: str) -> None:
    assert point in POINTS, point
    if os.environ.get(ENV) == point:
        os.killpg(os.getpgrp(), signal.SIGKILL)
