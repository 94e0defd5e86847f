"""Metadata transactions (KIP-868, 3.6+): `BeginTransactionRecord`, the records of the
transaction, then `EndTransactionRecord` (committed) or `AbortTransactionRecord` (aborted:
Kafka's metadata loader drops the records). A transaction may span batches and segments, so
its records are held until it ends; a controller that fails over mid-transaction leaves the
new active controller to write the abort (`QuorumController`'s activation records).

Nothing is dropped here: every record leaves with the state of the transaction it belongs
to (`None` outside one), Begin and End / Abort included; a transaction the input ends inside
of, or a Begin inside another, leaves `open`. Control records never belong to one.
"""

from __future__ import annotations

from typing import Generic, TypeVar

BEGIN, END, ABORT = "BeginTransactionRecord", "EndTransactionRecord", "AbortTransactionRecord"
COMMITTED, ABORTED, OPEN = "committed", "aborted", "open"

T = TypeVar("T")


class TransactionBuffer(Generic[T]):
    """Feed records in log order; take back (record, transaction state) in the same order,
    a transaction's records once it ends."""

    def __init__(self) -> None:
        self.held: list[T] | None = None  # the records of the open transaction

    def feed(self, item: T, record_type: str, control: bool = False
             ) -> list[tuple[T, str | None]]:
        if control:
            return [(item, None)]
        out: list[tuple[T, str | None]] = []
        if record_type == BEGIN:
            out = self.finish()  # a Begin inside a transaction: the first never ended
            self.held = [item]
            return out
        if self.held is None:
            return [(item, None)]
        self.held.append(item)
        if record_type in (END, ABORT):
            state = COMMITTED if record_type == END else ABORTED
            out = [(x, state) for x in self.held]
            self.held = None
        return out

    def finish(self) -> list[tuple[T, str | None]]:
        """The records of a transaction still open where the input ends."""
        out: list[tuple[T, str | None]] = [(x, OPEN) for x in self.held or []]
        self.held = None
        return out
