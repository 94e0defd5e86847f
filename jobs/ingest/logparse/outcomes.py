"""What became of a transition Kafka logged as failed: `rejected` or `failed`.

Kafka logs both with the same header (1.0+ `failed to change state for partition|replica
... from X to Y`, 0.8.2-0.11 `Initiated state change ... from X to Y failed`); the exception
that follows tells them apart. The transition matrix's refusal (`logInvalidTransition`) is
an `IllegalStateException: ... should be in [one of] ... states before moving to Y state`;
anything else (`StateChangeFailedException: Failed to elect leader ...`, a ZooKeeper error)
is an attempt that failed. Without the exception (an excerpt cut after the header), the
transition matrix decides: Kafka only attempts a transition the matrix allows, so a logged
pair the matrix refuses was rejected.
"""

from __future__ import annotations

from statemachine.rows import FAILED, REJECTED
from statemachine.states import (
    PARTITION_VALID_PREVIOUS,
    REPLICA_VALID_PREVIOUS,
    PartitionState,
    ReplicaState,
)

_REFUSAL = "states before moving to"


def failure_outcome(kind: str, from_state: str | None, to_state: str | None,
                    exception: str | None) -> str:
    """REJECTED or FAILED for a failed-transition line of `kind` (`partition_transition` /
    `replica_transition`) whose first exception line is `exception` (None: not logged)."""
    if exception:
        return REJECTED if _REFUSAL in exception else FAILED
    return REJECTED if _matrix_refuses(kind, from_state, to_state) else FAILED


def _matrix_refuses(kind: str, from_state: str | None, to_state: str | None) -> bool:
    if kind == "partition_transition":
        p_from = PartitionState.__members__.get(from_state or "")
        p_to = PartitionState.__members__.get(to_state or "")
        return p_from is not None and p_to is not None and \
            p_from not in PARTITION_VALID_PREVIOUS[p_to]
    r_from = ReplicaState.__members__.get(from_state or "")
    r_to = ReplicaState.__members__.get(to_state or "")
    return r_from is not None and r_to is not None and \
        r_from not in REPLICA_VALID_PREVIOUS[r_to]
