"""The KRaft cluster timeline: broker status intervals (`broker_timeline`) and the quorum
leaders (`controller_timeline`), the same rows as the ZooKeeper fold's
(`statemachine.cluster`), with record offsets for seqs.

A broker's status follows its registration in the image (`ClusterImage`):

* ``dead``: not registered, or fenced (a new registration starts fenced; the controller
  fences a broker whose heartbeats stop, and one that finished a controlled shutdown);
* ``shutting_down``: registered, unfenced and in controlled shutdown (KIP-841's
  `inControlledShutdown`, 3.3+): it still serves while the controller moves leadership;
* ``live``: registered and unfenced.

A controller row is written when the quorum leader epoch moves: a `LeaderChangeMessage`
(its `leaderId`), or the first record of a batch written in a newer epoch (the batch's
`partitionLeaderEpoch`; the leader is then -1 until a LeaderChange of that epoch names it,
as in dump text printed with `--skip-record-metadata`, where control records show no
fields). `live_brokers` are the live and shutting-down brokers at that record.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from statemachine.kraft.image import Broker
from statemachine.model import NO_LEADER
from statemachine.rows import BrokerIntervalRow, ControllerRow

LIVE, SHUTTING_DOWN, DEAD = "live", "shutting_down", "dead"


def status_of(reg: Broker | None) -> str:
    if reg is None or reg.fenced:
        return DEAD
    return SHUTTING_DOWN if reg.in_controlled_shutdown else LIVE


class _Open(NamedTuple):
    status: str
    seq_from: int
    ts_from: Any


class Timeline:
    """Broker intervals and controller rows, fed as the fold goes."""

    def __init__(self) -> None:
        self.open: dict[int, _Open] = {}
        self.intervals: list[BrokerIntervalRow] = []
        self.controllers: list[ControllerRow] = []
        self.epoch = -1

    def broker(self, broker_id: int, reg: Broker | None, seq: int, ts: Any) -> None:
        """The broker's registration after the record at `seq`."""
        now = status_of(reg)
        prev = self.open.get(broker_id)
        if prev is not None and prev.status == now:
            return
        if prev is None and now == DEAD and reg is None:
            return  # never seen: nothing to close
        if prev is not None:
            self.intervals.append(BrokerIntervalRow(broker_id, prev.status, prev.seq_from,
                                                    seq, prev.ts_from, ts))
        self.open[broker_id] = _Open(now, seq, ts)

    def quorum(self, leader: int | None, epoch: int | None, seq: int, ts: Any,
               live: frozenset[int]) -> None:
        """A record of quorum epoch `epoch`; `leader`: the leader a LeaderChange names."""
        if epoch is None:
            return
        if epoch > self.epoch:
            self.epoch = epoch
            self.controllers.append(ControllerRow(
                NO_LEADER if leader is None else leader, epoch, seq, ts, tuple(sorted(live))))
        elif (epoch == self.epoch and leader is not None and self.controllers
              and self.controllers[-1].controller_id == NO_LEADER):
            self.controllers[-1] = self.controllers[-1]._replace(controller_id=leader)

    def broker_rows(self) -> list[BrokerIntervalRow]:
        """The closed intervals, then those still open, by broker."""
        still = [BrokerIntervalRow(b, o.status, o.seq_from, None, o.ts_from, None)
                 for b, o in sorted(self.open.items())]
        return sorted(self.intervals, key=lambda r: (r.broker_id, r.seq_from)) + still
