"""Message templates that carry controller events or observed state, 0.8.2 to 3.9.

Each pattern is matched against the message with its logIdent removed (`idents.strip`).
The state-change lines of 0.8.2-0.11 carry `Controller C epoch E ` inside the message
instead of the 1.0+ `[Controller id=C epoch=E] ` prefix: `_OP` accepts both; verbs are
matched with either initial case (`changed` / `Changed`).

`extract(body, ident)` returns the facts of a message, or None if no pattern matches.
Patterns are grouped by the message's first word so a line tries only a few regexes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from jobs.ingest.logparse import values as V
from jobs.ingest.logparse.facts import Fact
from jobs.ingest.logparse.idents import Ident
from statemachine.rows import APPLIED, FAILED

_OP = r"(?:Controller (?P<cid>\d+) epoch (?P<cep>\d+) )?"
_OB = r"(?:Broker (?P<bid>\d+) )?"
_TP = r"(?P<tp>\S+)"
_ST = r"(?P<f>\w+) to (?P<t>\w+)"

Handler = Callable[[re.Match[str], Ident], list[Fact]]
_PATTERNS: list[tuple[re.Pattern[str], Handler]] = []


def _p(regex: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        _PATTERNS.append((re.compile(regex), fn))
        return fn
    return deco


def _ctl(m: re.Match[str], ident: Ident) -> tuple[int | None, int | None]:
    g = m.groupdict()
    cid = int(g["cid"]) if g.get("cid") else ident.controller_id
    cep = int(g["cep"]) if g.get("cep") else ident.controller_epoch
    return cid, cep


def _lead(kind: str, m: re.Match[str], ident: Ident, text: str, **kw: object) -> Fact:
    t, p = V.tp(m.group("tp"))
    cid, cep = _ctl(m, ident)
    ld = V.leadership(text)
    base: dict[str, Any] = dict(
        topic=t, partition=p, leader=ld.leader, leader_epoch=ld.leader_epoch, isr=ld.isr,
        zk_version=ld.zk_version, replicas=ld.replicas, controller_id=cid,
        controller_epoch=cep,
    )
    base.update(kw)
    return Fact(kind, **base)


# -- partition and replica state machines, valid and failed transitions (state-change.log) -

@_p(rf"^{_OP}[Cc]hanged partition {_TP} state from {_ST}"
    r"(?: with assigned replicas (?P<r>[-\d,]*))?\s*$")
def _part_state(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    cid, cep = _ctl(m, i)
    reps = V.ints(m.group("r")) if m.group("r") is not None else None
    return [Fact("partition_transition", t, p, None, m.group("f"), m.group("t"),
                 replicas=reps, controller_id=cid, controller_epoch=cep, outcome=APPLIED)]


@_p(rf"^{_OP}[Cc]hanged partition {_TP} from {_ST} with (?:leader (?P<l>-?\d+)|state (?P<s>.+))$")
def _part_leader(m: re.Match[str], i: Ident) -> list[Fact]:
    if m.group("l") is not None:
        t, p = V.tp(m.group("tp"))
        cid, cep = _ctl(m, i)
        return [Fact("partition_transition", t, p, None, m.group("f"), m.group("t"),
                     leader=int(m.group("l")), controller_id=cid, controller_epoch=cep,
                     outcome=APPLIED)]
    return [_lead("partition_transition", m, i, m.group("s"), from_state=m.group("f"),
                  to_state=m.group("t"), outcome=APPLIED)]


@_p(rf"^{_OP}(?:[Ii]nitiated state change for|failed to change state for) partition {_TP} "
    rf"from {_ST}(?: failed)?\s*$")
def _part_failed(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    cid, cep = _ctl(m, i)
    return [Fact("partition_transition", t, p, None, m.group("f"), m.group("t"),
                 controller_id=cid, controller_epoch=cep, outcome=FAILED)]


@_p(rf"^{_OP}[Cc]hanged state of replica (?P<r>-?\d+) for partition (?P<tp>.+?) from {_ST}\s*$")
def _replica_state(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    cid, cep = _ctl(m, i)
    return [Fact("replica_transition", t, p, int(m.group("r")), m.group("f"), m.group("t"),
                 controller_id=cid, controller_epoch=cep, outcome=APPLIED)]


@_p(rf"^{_OP}[Ii]nitiated state change of replica (?P<r>-?\d+) for partition (?P<tp>.+?) "
    rf"from {_ST} failed\s*$")
def _replica_failed(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    cid, cep = _ctl(m, i)
    return [Fact("replica_transition", t, p, int(m.group("r")), m.group("f"), m.group("t"),
                 controller_id=cid, controller_epoch=cep, outcome=FAILED)]


@_p(rf"^Partition {_TP} state changed to (?P<s>\(.*\)) after removing replica (?P<r>-?\d+) "
    r"from the ISR as part of transition to (?P<t>\w+)")
def _isr_shrink(m: re.Match[str], i: Ident) -> list[Fact]:
    return [_lead("isr_shrink", m, i, m.group("s"), broker_id=int(m.group("r")),
                  to_state=m.group("t"))]


@_p(rf"^New leader and ISR for partition {_TP} is (?P<s>.*)$")
def _new_leader_isr(m: re.Match[str], i: Ident) -> list[Fact]:
    return [_lead("isr_shrink", m, i, m.group("s"))]


@_p(r"^Started (?P<m>replica|partition) state machine with initial state -> (?P<map>.*)$")
def _snapshot(m: re.Match[str], i: Ident) -> list[Fact]:
    body, cid = m.group("map"), i.controller_id
    if m.group("m") == "replica":
        return [Fact("replica_snapshot", t, p, r, to_state=s, controller_id=cid)
                for t, p, r, s in _SNAP_REPLICA(body)]
    return [Fact("partition_snapshot", t, p, to_state=s, controller_id=cid)
            for t, p, s in _SNAP_PARTITION(body)]


_SNAP_R = re.compile(r"\[Topic=([^,\]]+),Partition=(\d+),Replica=(-?\d+)\] -> (\w+)")
_SNAP_P = re.compile(rf"({V.TP_TEXT}) -> (\w+)")


def _SNAP_REPLICA(body: str) -> list[tuple[str, int, int, str]]:  # noqa: N802
    return [(t, int(p), int(r), s) for t, p, r, s in _SNAP_R.findall(body)]


def _SNAP_PARTITION(body: str) -> list[tuple[str, int | None, str]]:  # noqa: N802
    out = []
    for x, s in _SNAP_P.findall(body):
        t, p = V.tp(x)
        out.append((t, p, s))
    return out


# -- elections (≤1.0 selectors, preferred election results, reassignment) ------------------

@_p(rf"^{_OP}[Ee]lected leader (?P<l>-?\d+) for Offline partition {_TP}\s*$")
def _elected(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    cid, cep = _ctl(m, i)
    return [Fact("leader_elected", t, p, leader=int(m.group("l")), controller_id=cid,
                 controller_epoch=cep, detail="offline")]


@_p(rf"^Selected new leader and ISR (?P<s>\{{.*\}}) for offline partition {_TP}\s*$")
def _selected(m: re.Match[str], i: Ident) -> list[Fact]:
    return [_lead("leader_elected", m, i, m.group("s"), detail="offline")]


@_p(rf"^No broker in ISR is alive for {_TP}\. Elect leader (?P<l>-?\d+) from live brokers "
    r"(?P<b>.*?)\. There's potential data loss\.")
def _unclean_selected(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    return [Fact("leader_elected", t, p, leader=int(m.group("l")), brokers=V.ints(m.group("b")),
                 controller_id=i.controller_id, detail="unclean")]


@_p(rf"^Partition {_TP} completed preferred replica leader election\. New leader is (?P<l>-?\d+)")
def _preferred_done(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    return [Fact("leader_elected", t, p, leader=int(m.group("l")),
                 controller_id=i.controller_id, detail="preferred")]


@_p(rf"^Partition {_TP} failed to complete preferred replica leader election(?: to -?\d+)?\. "
    r"Leader is (?:still )?(?P<l>-?\d+)")
def _preferred_failed(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    return [Fact("leader_elected", t, p, leader=int(m.group("l")),
                 controller_id=i.controller_id, outcome=FAILED, detail="preferred")]


@_p(rf"^Initializing leader and isr for partition {_TP} to (?P<s>.*)$")
def _initial_leader(m: re.Match[str], i: Ident) -> list[Fact]:
    return [_lead("leader_elected", m, i, m.group("s"), detail="initial")]


@_p(rf"^After leader election, leader cache for {_TP} is updated to (?P<s>.*)$")
def _leader_cache(m: re.Match[str], i: Ident) -> list[Fact]:
    return [_lead("leader_elected", m, i, m.group("s"), detail="leader_cache")]


_CACHE_ENTRY = re.compile(rf"({V.TP_TEXT}) -> (\([^)]*\))")


@_p(r"^After leader election, leader cache is updated to (?P<map>.*)$")
def _leader_cache_all(m: re.Match[str], i: Ident) -> list[Fact]:
    out = []
    for x, s in _CACHE_ENTRY.findall(m.group("map")):
        t, p = V.tp(x)
        ld = V.leadership(s)
        out.append(Fact("leader_elected", t, p, leader=ld.leader, leader_epoch=ld.leader_epoch,
                        isr=ld.isr, controller_id=i.controller_id,
                        controller_epoch=ld.controller_epoch, detail="leader_cache"))
    return out


@_p(rf"^Updated leader epoch for partition {_TP}\s+to (?P<le>-?\d+)(?:, zkVersion=(?P<zk>-?\d+))?")
def _epoch_updated(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    zk = int(m.group("zk")) if m.group("zk") else None
    return [Fact("leader_epoch_updated", t, p, leader_epoch=int(m.group("le")), zk_version=zk,
                 controller_id=i.controller_id)]


@_p(rf"^Leader (?P<l>-?\d+) for partition {_TP} being reassigned, is (?P<how>not in|already in) "
    r"the new list of replicas (?P<rs>[-\d,]*)(?P<tail>.*)$")
def _reassign_leader(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    tail = m.group("tail")
    how = "not_in_target" if m.group("how") == "not in" else (
        "in_target_dead" if "dead" in tail else "in_target_alive")
    return [Fact("reassignment_leader", t, p, leader=int(m.group("l")),
                 replicas=V.ints(m.group("rs")), controller_id=i.controller_id, detail=how)]


# -- requests the controller sends (state-change.log, controller side) ---------------------

@_p(rf"^{_OP}[Ss]ending (?P<typ>become-leader|become-follower) LeaderAndIsr request (?P<s>.+?)"
    rf"(?: with correlationId \d+)? to broker (?P<b>-?\d+) for partition {_TP}\s*$")
def _lai(m: re.Match[str], i: Ident) -> list[Fact]:
    return [_lead("leader_and_isr_request", m, i, m.group("s"), broker_id=int(m.group("b")),
                  detail=m.group("typ"))]


@_p(r"^Sending LeaderAndIsr request to broker (?P<b>-?\d+) with (?P<nl>\d+) become-leader "
    r"and (?P<nf>\d+) become-follower partitions")
def _lai_summary(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("leader_and_isr_summary", broker_id=int(m.group("b")),
                 controller_id=i.controller_id, controller_epoch=i.controller_epoch,
                 detail=f"become_leader={m.group('nl')} become_follower={m.group('nf')}")]


@_p(rf"^{_OP}[Ss]ending UpdateMetadata request (?P<s>.+?)(?: with correlationId \d+)? "
    rf"to brokers? (?P<bs>.+?) for partition {_TP}\s*$")
def _um(m: re.Match[str], i: Ident) -> list[Fact]:
    return [_lead("update_metadata_request", m, i, m.group("s"), brokers=V.ints(m.group("bs")))]


@_p(r"^Sending UpdateMetadata request to brokers (?P<bs>.*) for (?P<n>\d+) partitions")
def _um_summary(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("update_metadata_summary", brokers=V.ints(m.group("bs")),
                 controller_id=i.controller_id, controller_epoch=i.controller_epoch,
                 detail=f"partitions={m.group('n')}")]


@_p(rf"^Sending StopReplica request (?P<s>.+) to broker (?P<b>-?\d+) for partition {_TP}\s*$")
def _sr(m: re.Match[str], i: Ident) -> list[Fact]:
    s = m.group("s")
    delete = "delete=true" if "deletePartition=true" in s else "delete=false"
    return [_lead("stop_replica_request", m, i, s, broker_id=int(m.group("b")), detail=delete)]


@_p(r"^Sending StopReplica request (?:\(delete = (?P<d>true|false)\) )?for (?P<n>\d+) replicas "
    r"to broker (?P<b>-?\d+)")
def _sr_summary(m: re.Match[str], i: Ident) -> list[Fact]:
    d = f"delete={m.group('d')} " if m.group("d") else ""
    return [Fact("stop_replica_summary", broker_id=int(m.group("b")),
                 controller_id=i.controller_id, controller_epoch=i.controller_epoch,
                 detail=f"{d}replicas={m.group('n')}")]


@_p(r"^The stop replica request \(delete = (?P<d>true|false)\) sent to broker (?P<b>-?\d+) is "
    r"(?P<l>.*)$")
def _sr_debug(m: re.Match[str], i: Ident) -> list[Fact]:
    b, d = int(m.group("b")), f"delete={m.group('d')}"
    return [Fact("stop_replica_request", t, p, b, controller_id=i.controller_id, detail=d)
            for t, p, _r in V.partition_and_replicas(m.group("l"))]


@_p(rf"^{_OP}[Ss]ent LeaderAndIsr request (?P<s>.+?) with new (?:assigned replica list|replica "
    rf"assignment) (?P<ra>.+?) to leader (?P<l>-?\d+) for partition being reassigned {_TP}\s*$")
def _reassign_lai(m: re.Match[str], i: Ident) -> list[Fact]:
    return [_lead("leader_and_isr_request", m, i, m.group("s"), broker_id=int(m.group("l")),
                  detail="reassignment")]


# -- broker side of the requests (state-change.log, written by every broker) --------------

@_p(rf"^{_OB}[Rr]eceived LeaderAndIsr request (?P<s>.+?) correlation id \d+ from controller "
    r"(?P<c>\d+) epoch (?P<e>\d+)(?: for partition (?P<tp>\S+))?\s*$")
def _broker_lai(m: re.Match[str], i: Ident) -> list[Fact]:
    s = m.group("s")
    if m.group("tp"):
        t, p = V.tp(m.group("tp"))
    else:
        mt = re.search(r"topicName='([^']*)', partitionIndex=(\d+)", s)
        if mt is None:
            return []
        t, p = mt.group(1), int(mt.group(2))
    ld = V.leadership(s)
    b = int(m.group("bid")) if m.group("bid") else i.broker_id
    return [Fact("broker_leader_and_isr", t, p, b, leader=ld.leader,
                 leader_epoch=ld.leader_epoch, isr=ld.isr, zk_version=ld.zk_version,
                 replicas=ld.replicas, controller_id=int(m.group("c")),
                 controller_epoch=int(m.group("e")))]


@_p(rf"^{_OB}[Cc]ached leader info (?P<s>.+?) for partition {_TP} in response to UpdateMetadata "
    r"request sent by controller (?P<c>\d+) epoch (?P<e>\d+)")
def _broker_um(m: re.Match[str], i: Ident) -> list[Fact]:
    b = int(m.group("bid")) if m.group("bid") else i.broker_id
    f = _lead("broker_metadata", m, i, m.group("s"), broker_id=b)
    return [f._replace(controller_id=int(m.group("c")), controller_epoch=int(m.group("e")))]


@_p(rf"^{_OB}[Hh]andling LeaderAndIsr request correlationId \d+ from controller (?P<c>\d+) "
    r"epoch (?P<e>\d+) starting the (?P<typ>become-leader|become-follower) transition for "
    r"partition (?P<tp>\S+)(?: with leader (?P<l>-?\d+))?\s*$")
def _broker_transition(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    b = int(m.group("bid")) if m.group("bid") else i.broker_id
    leader = b if m.group("typ") == "become-leader" else (
        int(m.group("l")) if m.group("l") else None)
    return [Fact("broker_transition", t, p, b, leader=leader, controller_id=int(m.group("c")),
                 controller_epoch=int(m.group("e")), detail=m.group("typ"))]


@_p(rf"^Leader {_TP} (?:with topic id \S+ )?starts at leader epoch (?P<le>-?\d+) from offset "
    r"-?\d+ (?:with partition epoch (?P<pe>-?\d+), )?(?:with )?high watermark -?\d+,? "
    r"ISR \[?(?P<isr>[-\d, ]*)\]?")
def _leader_start(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    pe = int(m.group("pe")) if m.group("pe") else None
    return [Fact("broker_leader_start", t, p, i.broker_id, leader=i.broker_id,
                 leader_epoch=int(m.group("le")), isr=V.ints(m.group("isr")), zk_version=pe)]


@_p(rf"^Follower {_TP} starts at leader epoch (?P<le>-?\d+) from offset -?\d+ "
    r"(?:with partition epoch (?P<pe>-?\d+) and )?(?:with )?high watermark -?\d+\."
    r"(?: Current leader is (?P<l>-?\d+)\.)?")
def _follower_start(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    pe = int(m.group("pe")) if m.group("pe") else None
    leader = int(m.group("l")) if m.group("l") else None
    return [Fact("broker_follower_start", t, p, i.broker_id, leader=leader,
                 leader_epoch=int(m.group("le")), zk_version=pe)]


# -- controller events (controller.log, the class loggers under kafka.controller) ---------

@_p(r"^(?P<b>\d+) successfully elected as the controller(?:\. Epoch incremented to (?P<e>\d+) "
    r"and epoch zk version is now \d+)?")
def _elected_controller(m: re.Match[str], i: Ident) -> list[Fact]:
    e = int(m.group("e")) if m.group("e") else None
    return [Fact("failover", broker_id=int(m.group("b")), controller_id=int(m.group("b")),
                 controller_epoch=e)]


@_p(r"^(?:Broker (?P<b>\d+) s|S)tarting become controller state transition")
def _become_controller(m: re.Match[str], i: Ident) -> list[Fact]:
    b = int(m.group("b")) if m.group("b") else i.controller_id
    return [Fact("failover", broker_id=b, controller_id=b)]


@_p(r"^(?:Controller (?P<b>\d+) incremented epoch to|Incremented epoch to|Epoch incremented to) "
    r"(?P<e>\d+)")
def _epoch(m: re.Match[str], i: Ident) -> list[Fact]:
    b = int(m.group("b")) if m.group("b") else i.controller_id
    return [Fact("failover_epoch", broker_id=b, controller_id=b,
                 controller_epoch=int(m.group("e")))]


@_p(r"^Currently active brokers in the cluster: (?P<bs>.*)$")
def _active(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("failover_brokers", brokers=V.ints(m.group("bs")),
                 controller_id=i.controller_id)]


@_p(r"^List of topics to be deleted: (?P<ts>.*)$")
def _deletions_found(m: re.Match[str], i: Ident) -> list[Fact]:
    # KafkaController.fetchTopicDeletionsInProgress, every release 0.8.2-3.9:
    # `topicsToBeDeleted.mkString(",")` (a topic name holds no comma), empty for none.
    return [Fact("failover_deletions", controller_id=i.controller_id,
                 detail=",".join(t.strip() for t in m.group("ts").split(",") if t.strip()))]


@_p(r"^(?:Broker (?P<b>\d+) is r|R)eady to serve as the new controller with epoch (?P<e>\d+)")
def _ready(m: re.Match[str], i: Ident) -> list[Fact]:
    b = int(m.group("b")) if m.group("b") else i.controller_id
    return [Fact("failover_ready", broker_id=b, controller_id=b,
                 controller_epoch=int(m.group("e")))]


@_p(r"^Newly added brokers: (?P<new>[-\d, ]*), deleted brokers: (?P<dead>[-\d, ]*), "
    r"(?:bounced brokers: (?P<bounced>[-\d, ]*), )?all live brokers: (?P<live>[-\d, ]*)$")
def _broker_change(m: re.Match[str], i: Ident) -> list[Fact]:
    cid = i.controller_id
    out = [Fact("broker_change", brokers=V.ints(m.group("live")), controller_id=cid)]
    out += [Fact("broker_up", broker_id=b, controller_id=cid, detail="new")
            for b in V.ints(m.group("new"))]
    out += [Fact("broker_up", broker_id=b, controller_id=cid, detail="bounced")
            for b in V.ints(m.group("bounced"))]
    out += [Fact("broker_down", broker_id=b, controller_id=cid) for b in V.ints(m.group("dead"))]
    # Kafka's own view after the change: every registered broker (shutting down included).
    out.append(Fact("live_brokers", brokers=V.ints(m.group("live")), controller_id=cid,
                    detail="broker_change"))
    return out


@_p(r"^Error while handling broker changes$")
def _broker_change_failed(m: re.Match[str], i: Ident) -> list[Fact]:
    # 0.8.2-0.10.2 BrokerChangeListener: the handler threw (the exception follows as
    # continuation lines, kept as `detail`); `assemble.py` withdraws what it did not do.
    return [Fact("broker_change_failed", controller_id=i.controller_id, outcome=FAILED)]


@_p(r"^New broker startup callback for (?P<bs>.*)$")
def _startup_cb(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("startup_callback", broker_id=b, controller_id=i.controller_id)
            for b in V.ints(m.group("bs"))]


@_p(r"^Broker failure callback for (?P<bs>.*)$")
def _failure_cb(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("failure_callback", broker_id=b, controller_id=i.controller_id)
            for b in V.ints(m.group("bs"))]


@_p(r"^Shutting down broker (?P<b>-?\d+)\s*$")
def _shutdown(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("controlled_shutdown", broker_id=int(m.group("b")),
                 controller_id=i.controller_id)]


@_p(r"^New topics: \[(?P<nt>.*?)\], deleted topics: \[(?P<dt>.*?)\], new partition replica "
    r"assignment \[(?P<a>.*)\]\s*$")
def _new_topics(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("new_partition", t, p, replicas=r, controller_id=i.controller_id,
                 detail="new_topic")
            for t, p, r in V.assignment(m.group("a")) if p is not None]


@_p(r"^New partitions to be added (?P<a>.*)$")
def _new_partitions(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("new_partition", t, p, replicas=r, controller_id=i.controller_id,
                 detail="add_partitions")
            for t, p, r in V.assignment(m.group("a")) if p is not None]


@_p(r"^Starting topic deletion for topics (?P<ts>.*)$")
def _deletion_start(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("deletion_start", t, controller_id=i.controller_id)
            for t in V.topics(m.group("ts"))]


@_p(r"^Deletion of topic (?P<t>\S+) successfully completed")
def _deletion_done(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("deletion_done", m.group("t"), controller_id=i.controller_id)]


_ERR_ENTRY = re.compile(rf"({V.TP_TEXT}) -> (\w+)")


@_p(r"^Delete topic callback invoked on StopReplica response received from broker (?P<b>-?\d+): "
    r"request error = (?P<re>\w+), partition errors = (?P<pe>.*)$")
def _stop_replica_response(m: re.Match[str], i: Ident) -> list[Fact]:
    b, req = int(m.group("b")), m.group("re")
    out = []
    for x, err in _ERR_ENTRY.findall(m.group("pe")):
        t, p = V.tp(x)
        code = req if req != "NONE" else err
        out.append(Fact("stop_replica_response", t, p, b, controller_id=i.controller_id,
                        error=None if code == "NONE" else code))
    return out


@_p(r"^Deletion successfully completed for replicas (?P<l>.*)$")
def _replicas_deleted(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("replica_deleted", t, p, r, controller_id=i.controller_id)
            for t, p, r in V.partition_and_replicas(m.group("l"))]


@_p(rf"^Handling reassignment of partition {_TP} to new replicas (?P<rs>[-\d,]*)\s*$")
def _reassign(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    return [Fact("reassign_start", t, p, replicas=V.ints(m.group("rs")),
                 controller_id=i.controller_id)]


@_p(rf"^Updating assignment of partition {_TP} from (?P<a>ReplicaAssignment\(.*?\)) to "
    r"(?P<b>ReplicaAssignment\(.*?\))\s*$")
def _reassign_update(m: re.Match[str], i: Ident) -> list[Fact]:
    t, p = V.tp(m.group("tp"))
    (a,), (b,) = V.replica_assignments(m.group("a")), V.replica_assignments(m.group("b"))
    target = tuple(r for r in b.replicas if r not in b.removing)
    start = not a.adding and not a.removing
    return [Fact("reassign_update", t, p, replicas=target, controller_id=i.controller_id,
                 detail="start" if start else "progress")]


@_p(rf"^ISR for partition {_TP} updated to (?:\[(?P<isr>[-\d,]*)\](?: and zkVersion updated to "
    r"\[(?P<zk>-?\d+)\])?|(?P<s>LeaderAndIsr\(.*\)))\.?\s*$")
def _isr_update(m: re.Match[str], i: Ident) -> list[Fact]:
    if m.group("s"):
        return [_lead("isr_update", m, i, m.group("s"))]
    t, p = V.tp(m.group("tp"))
    zk = int(m.group("zk")) if m.group("zk") else None
    return [Fact("isr_update", t, p, isr=V.ints(m.group("isr")), zk_version=zk,
                 controller_id=i.controller_id)]


@_p(r"^Sending MetadataRequest to Brokers: ?(?P<bs>.*?) for Topic(?:And)?Partitions: ?(?P<tps>.*)$")
def _isr_notification(m: re.Match[str], i: Ident) -> list[Fact]:
    # `IsrChangeNotification` (0.9 to 2.6, and later below IBP 2.7): the leaders wrote these
    # partitions' ISR to ZooKeeper; the UpdateMetadata lines that follow carry it.
    brokers = V.ints(m.group("bs"))
    return [Fact("isr_notification", t, p, brokers=brokers, controller_id=i.controller_id)
            for t, p in V.tp_list(m.group("tps")) if p is not None]


@_p(r"^Starting preferred replica leader election for partitions (?P<tps>.*)$")
def _preferred(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("election_start", t, p, controller_id=i.controller_id, detail="PREFERRED")
            for t, p in V.tp_list(m.group("tps")) if p is not None]


@_p(r"^Starting replica leader election \((?P<typ>PREFERRED|UNCLEAN)\) for partitions "
    r"(?P<tps>.*?) triggered by (?P<trig>\w+)\s*$")
def _election(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("election_start", t, p, controller_id=i.controller_id, detail=m.group("typ"),
                 error=None)
            for t, p in V.tp_list(m.group("tps")) if p is not None]


@_p(r"^Unclean leader election has been enabled for topic (?P<t>\S+)\s*$")
def _unclean_topic(m: re.Match[str], i: Ident) -> list[Fact]:
    return [Fact("unclean_enabled", m.group("t"), controller_id=i.controller_id)]


# -- dispatch ------------------------------------------------------------------------------

def _first_words(rx: re.Pattern[str]) -> list[str] | None:
    """The literal first words a pattern can start with, or None (try it on every line)."""
    src = rx.pattern.lstrip("^")
    head: list[str] = []
    for opt, word in ((_OP, "Controller"), (_OB, "Broker")):
        if src.startswith(opt):
            src, head = src[len(opt):], [word]
    m = re.match(r"(?:\[(\w)(\w)\]|\(\?:(\w+) (\w+) \w+ s\|S\)|\(\?:Broker \(\?P<b>\\d\+\) is "
                 r"r\|R\))?([A-Za-z-]+)", src)
    if src.startswith("(?P<b>"):
        return None
    if src.startswith("(?:Controller (?P<b>"):
        return ["Controller", "Incremented", "Epoch"]
    if src.startswith("(?:Broker (?P<b>\\d+) s|S)"):
        return ["Broker", "Starting"]
    if src.startswith("(?:Broker (?P<b>\\d+) is r|R)"):
        return ["Broker", "Ready"]
    if src.startswith("(?:[Ii]nitiated state change for|failed"):
        return head + ["Initiated", "initiated", "failed"]
    if m is None:
        return None
    if m.group(1):
        word = m.group(5)
        return head + [m.group(1) + word, m.group(2) + word]
    return head + [m.group(5)]


_BY_WORD: dict[str, list[tuple[re.Pattern[str], Handler]]] = {}
_ANY: list[tuple[re.Pattern[str], Handler]] = []
for _rx, _fn in _PATTERNS:
    _words = _first_words(_rx)
    if _words is None:
        _ANY.append((_rx, _fn))
    else:
        for _w in dict.fromkeys(_words):
            _BY_WORD.setdefault(_w, []).append((_rx, _fn))


def extract(body: str, ident: Ident) -> list[Fact] | None:
    """Facts of a message (logIdent stripped), or None if no pattern knows the message."""
    i = body.find(" ")
    key = body if i < 0 else body[:i]
    for rx, fn in _BY_WORD.get(key, ()):
        m = rx.match(body)
        if m is not None:
            return fn(m, ident)
    for rx, fn in _ANY:
        m = rx.match(body)
        if m is not None:
            return fn(m, ident)
    return None
