"""A `data_loss` row in words, the same for the audit's `unclean_election` check, its
post-mortem and the report. The figure alone (the report's cell):

    exactly 100 messages lost
    between 100 and 120 messages lost
    at least 100 messages lost
    data loss unknown

and the row's `detail` (the figure and how it was reached) with the first lines that
prove it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobs.engine.data_loss import BOUNDED, EXACT


def figure(row: Mapping[str, Any]) -> str:
    """The figure alone."""
    if row["result"] == EXACT:
        return f"exactly {row['messages_lost']} messages lost"
    low, high = row["messages_lost_at_least"], row["messages_lost_at_most"]
    if row["result"] == BOUNDED:
        if low is not None and high is not None:
            return (f"{low} messages lost (at least and at most)" if low == high
                    else f"between {low} and {high} messages lost")
        if low is not None:
            return f"at least {low} messages lost"
        return f"at most {high} messages lost"
    return "data loss unknown"


def proof(row: Mapping[str, Any], limit: int = 3) -> str:
    """The first lines that prove it, as `file:line`."""
    sources = [e["source"] for e in row["evidence"] or []]
    more = f" and {len(sources) - limit} more" if len(sources) > limit else ""
    return ", ".join(sources[:limit]) + more if sources else "no line"


def check_text(row: Mapping[str, Any]) -> str:
    """The check's detail: `data loss: 100 messages lost on orders-0: ...; proof: ...`."""
    return f"data loss: {row['detail']}; proof: {proof(row)}"


def post_mortem_line(row: Mapping[str, Any]) -> str:
    """`seq 5 (incident at seq 4): 100 messages lost on orders-0: ...; proof: ...`."""
    where = f"seq {row['seq']}"
    if row.get("incident_id") is not None:
        where += f" (incident at seq {row['incident_id']})"
    return f"{where}: {row['detail']}; proof: {proof(row)}"
