"""logIdent prefixes (`[Controller id=1 epoch=2] `, `[Controller 1]: `, `[Broker id=2] `
across versions) and which loggers are the controller's.

`strip(msg)` removes one known prefix and says who wrote the line: the controller (with its
id and, for the 1.0+ state-change logger, its epoch), a broker answering the controller
(`[Broker id=B] `), or a server component.
"""

from __future__ import annotations

import re
from typing import NamedTuple

CONTROLLER = "controller"
BROKER = "broker"
SERVER = "server"

_IDENT = re.compile(
    r"^\[(?:"
    r"Controller id=(?P<cid>\d+)(?: epoch=(?P<cep>\d+))?"
    r"|Broker id=(?P<bid>\d+)"
    r"|Controller (?P<cid_old>\d+)"
    r"|(?:PartitionStateMachine|ReplicaStateMachine|RequestSendThread|ControllerEventThread)"
    r" controllerId=(?P<cid_cls>\d+)"
    r"|(?:Partition|Replica) state machine on [Cc]ontroller (?P<cid_sm>\d+)"
    r"|Topic Deletion Manager (?P<cid_tdm>\d+)"
    r"|Channel manager on controller (?P<cid_ch>\d+)"
    r"|Controller-(?P<cid_st>\d+)-to-broker-\d+-send-thread"
    r"|controller-event-thread"
    r"|\w+Listener on (?:Controller )?(?P<cid_l>\d+)"
    r"|\w+(?:LeaderSelector)"
    r"|(?P<server>KafkaServer id=\d+|Kafka Server \d+)"
    r")\](?:[:,])? ?"
)

# Class loggers whose lines are the controller's (1.1: kafka.controller.* and the
# state-change logger); layouts without a package (LinkedIn's `[KafkaController]`) give the
# bare class name.
CONTROLLER_CLASSES = frozenset({
    "KafkaController", "PartitionStateMachine", "ReplicaStateMachine",
    "ZkPartitionStateMachine", "ZkReplicaStateMachine", "TopicDeletionManager",
    "ControllerChannelManager", "ControllerBrokerRequestBatch", "RequestSendThread",
    "ControllerEventManager", "ControllerEventManager$ControllerEventThread",
    "ControllerEventThread", "OfflinePartitionLeaderSelector",
    "ControlledShutdownLeaderSelector", "ReassignedPartitionLeaderSelector",
    "PreferredReplicaPartitionLeaderSelector", "NoOpLeaderSelector", "PartitionLeaderSelector",
    "ReplicaStateMachine$BrokerChangeListener", "PartitionStateMachine$TopicChangeListener",
    "PartitionStateMachine$DeleteTopicsListener", "PartitionStateMachine$AddPartitionsListener",
    "KafkaController$PartitionsReassignedListener",
    "KafkaController$PreferredReplicaElectionListener",
    "KafkaController$SessionExpirationListener", "KafkaController$IsrChangeNotificationListener",
    "ControllerContext", "ControllerChangeHandler",
})
STATE_CHANGE_LOGGER = "state.change.logger"


class Ident(NamedTuple):
    role: str | None  # controller | broker | server | None (no known prefix)
    controller_id: int | None
    controller_epoch: int | None
    broker_id: int | None  # the broker of `[Broker id=B]`


NO_IDENT = Ident(None, None, None, None)


_COMMON = re.compile(r"^\[(Controller|Broker) id=(\d+)(?: epoch=(\d+))?\] ")


def strip(msg: str) -> tuple[Ident, str]:
    if not msg or msg[0] != "[":
        return NO_IDENT, msg
    m = _COMMON.match(msg)  # the 1.0+ prefixes: most lines of a modern log
    if m is not None:
        rest, n = msg[m.end():], int(m.group(2))
        if m.group(1) == "Broker":
            return Ident(BROKER, None, None, n), rest
        ep = m.group(3)
        return Ident(CONTROLLER, n, int(ep) if ep else None, None), rest
    m = _IDENT.match(msg)
    if m is None:
        return NO_IDENT, msg
    rest = msg[m.end():]
    g = m.groupdict()
    if g["bid"] is not None:
        return Ident(BROKER, None, None, int(g["bid"])), rest
    if g["server"] is not None:
        return Ident(SERVER, None, None, None), rest
    cid = next((g[k] for k in ("cid", "cid_old", "cid_cls", "cid_sm", "cid_tdm", "cid_ch",
                               "cid_st", "cid_l") if g[k] is not None), None)
    cep = g["cep"]
    return Ident(CONTROLLER, int(cid) if cid else None, int(cep) if cep else None, None), rest


def is_controller_logger(logger: str | None) -> bool:
    if not logger:
        return False
    if logger == STATE_CHANGE_LOGGER or logger.startswith("kafka.controller."):
        return True
    return logger in CONTROLLER_CLASSES
