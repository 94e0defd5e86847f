"""The simulator's own view of the cluster, from the physical story: which brokers are up,
who leads each partition, who is in sync, and the leader epoch as Kafka 3.7.1 counts it.

This is deliberately not a copy of the core. It tracks only leader, ISR and leader epoch per
partition (plus the Online/Offline flag that decides which partitions a controller retries),
and applies the outcome of each controller flow the simulator emits (Kafka 3.7.1's
`ReplicaStateMachine`, `Election.scala` and `KafkaController` flows):

* a leader election (offline, controlled-shutdown, reassign, preferred) bumps the epoch once;
* the controller removing a replica from the ISR (OfflineReplica) bumps the epoch, keeps the
  last ISR member, and clears the leader if it was the replica;
* the leader's own ISR changes (IsrChanged / AlterPartition) never bump the epoch.

Several brokers in one controller call are handled in the order Kafka's
`replicas.groupBy(_.replica)` visits them, under the Scala 2.13 library of Kafka 3.7.1
(`statemachine.scala_order`: Scala's own hashing, not the core's logic).
"""

from __future__ import annotations

from statemachine.scala_order import group_by_order

NO_LEADER = -1
SCALA_BINARY = "2.13"  # the Scala build of Kafka 3.7.1 (the replay's default)


class Part:
    __slots__ = (
        "pid",
        "topic",
        "partition",
        "replicas",
        "leader",
        "epoch",
        "isr",
        "target",
        "adding",
        "removing",
    )

    def __init__(self, pid: int, topic: str, partition: int, replicas: tuple[int, ...]) -> None:
        self.pid = pid
        self.topic = topic
        self.partition = partition
        self.replicas = replicas
        self.leader = NO_LEADER
        self.epoch = 0
        self.isr: tuple[int, ...] = ()
        self.target: tuple[int, ...] = ()  # non-empty while a reassignment is in flight
        self.adding: tuple[int, ...] = ()
        self.removing: tuple[int, ...] = ()


class Topic:
    __slots__ = ("name", "pids", "unclean", "queued")

    def __init__(self, name: str, unclean: bool | None) -> None:
        self.name = name
        self.pids: list[int] = []
        self.unclean = unclean  # topic override of unclean.leader.election.enable
        self.queued = False  # marked for deletion


class Truth:
    def __init__(self, brokers: list[int], unclean_default: bool = False) -> None:
        self.brokers = sorted(brokers)
        self.live: set[int] = set()
        self.shutting_down: set[int] = set()
        self.controller = -1
        self.controller_epoch = 0
        self.unclean_default = unclean_default
        self.parts: list[Part | None] = []
        self.topics: dict[str, Topic] = {}
        self.hosted: dict[int, set[int]] = {b: set() for b in self.brokers}
        self.offline: set[int] = set()  # pids in OfflinePartition
        self.reassigning: set[int] = set()

    # ----------------------------------------------------------------- helpers
    def part(self, topic: str, partition: int) -> Part | None:
        t = self.topics.get(topic)
        if t is None or partition >= len(t.pids):
            return None
        return self.parts[t.pids[partition]]

    def _hosts_live_topic(self, b: int) -> bool:
        """Whether broker b hosts a replica of a topic not queued for deletion."""
        return any(not self._queued(p) for pid in self.hosted[b]
                   if (p := self.parts[pid]) is not None)

    def _queued(self, p: Part) -> bool:
        return self.topics[p.topic].queued

    def _unclean(self, p: Part) -> bool:
        u = self.topics[p.topic].unclean
        return self.unclean_default if u is None else u

    def _remove_from_isr(self, p: Part, r: int) -> None:
        """OfflineReplica with leadership info (`removeReplicasFromIsr`): a controller
        write, epoch + 1."""
        if r not in p.isr:
            return
        if p.leader == r:
            p.leader = NO_LEADER
        if len(p.isr) > 1:
            p.isr = tuple(x for x in p.isr if x != r)
        p.epoch += 1

    def _elect_offline(self, p: Part, allow_unclean: bool) -> bool:
        """OfflinePartitionLeaderElectionStrategy."""
        live = self.live
        leader = next((r for r in p.replicas if r in live and r in p.isr), None)
        if leader is not None:
            p.isr = tuple(r for r in p.isr if r in live)
        elif allow_unclean or self._unclean(p):
            leader = next((r for r in p.replicas if r in live), None)
            if leader is None:
                return False
            p.isr = (leader,)
        else:
            return False
        p.leader = leader
        p.epoch += 1
        return True

    def trigger_online(self, pids: list[int] | None = None) -> list[int]:
        """triggerOnlinePartitionStateChange: elect every Offline partition whose topic is not
        queued for deletion. Returns the partitions that got a leader."""
        elected = []
        for pid in sorted(self.offline if pids is None else pids):
            p = self.parts[pid]
            if p is None or self._queued(p):
                continue
            if self._elect_offline(p, allow_unclean=False):
                self.offline.discard(pid)
                elected.append(pid)
        return elected

    # ----------------------------------------------------------------- partition events
    def create(
        self, topic: str, assignments: list[tuple[int, tuple[int, ...]]], unclean: bool | None
    ) -> None:
        t = self.topics.get(topic)
        if t is None:
            t = self.topics[topic] = Topic(topic, unclean)
        for partition, replicas in assignments:
            assert partition == len(t.pids)
            p = Part(len(self.parts), topic, partition, replicas)
            self.parts.append(p)
            t.pids.append(p.pid)
            for r in replicas:
                self.hosted[r].add(p.pid)
            live = [r for r in replicas if r in self.live]
            assert live, "the simulator only assigns partitions to live brokers"
            p.leader, p.isr, p.epoch = live[0], tuple(live), 0

    def isr_changed(self, p: Part, isr: tuple[int, ...]) -> None:
        """The leader's AlterPartition: ISR replaced, epoch unchanged; may complete a
        reassignment (`maybeCompleteReassignment`)."""
        p.isr = isr
        if p.target and all(r in isr for r in p.target):
            self._complete_reassignment(p)

    def preferred(self, p: Part) -> None:
        """PreferredReplicaPartitionLeaderElectionStrategy; the caller checked the head is
        live and in the ISR."""
        p.leader = p.replicas[0]
        p.epoch += 1

    def unclean_election(self, p: Part) -> bool:
        if self._elect_offline(p, allow_unclean=True):
            self.offline.discard(p.pid)
            return True
        return False

    def config_changed(self, topic: str, unclean: bool) -> list[int]:
        t = self.topics[topic]
        t.unclean = unclean
        if not unclean:
            return []
        # TopicUncleanLeaderElectionEnable: retry the topic's offline partitions.
        return self.trigger_online([pid for pid in t.pids if pid in self.offline])

    def reassign(self, p: Part, target: tuple[int, ...]) -> None:
        """onPartitionReassignment (KIP-455) for a partition not being reassigned."""
        origin = p.replicas
        replicas = tuple(dict.fromkeys(target + origin))
        p.target = target
        p.adding = tuple(r for r in replicas if r not in origin)
        p.removing = tuple(r for r in replicas if r not in target)
        p.replicas = replicas
        for r in p.adding:
            self.hosted[r].add(p.pid)
        self.reassigning.add(p.pid)
        if all(r in p.isr for r in target):
            self._complete_reassignment(p)
        else:
            p.epoch += 1  # phase A: updateLeaderEpochAndSendRequest

    def _complete_reassignment(self, p: Part) -> None:
        target, removing = p.target, p.removing
        p.replicas = target
        # B3: move the leader if it is not a target replica, else bump the epoch.
        if p.leader not in target or p.leader not in self.live:
            leader = next((r for r in target if r in self.live and r in p.isr), None)
            if leader is not None:
                p.leader = leader
                p.epoch += 1
        else:
            p.epoch += 1
        # B4: stopRemovedReplicas -> one OfflineReplica call for the removed replicas.
        for r in group_by_order(tuple(removing), SCALA_BINARY):
            self._remove_from_isr(p, r)
            self.hosted[r].discard(p.pid)
        p.target = p.adding = p.removing = ()
        self.reassigning.discard(p.pid)

    def delete_topic(self, topic: str) -> None:
        t = self.topics.pop(topic)
        for pid in t.pids:
            p = self.parts[pid]
            assert p is not None
            for r in p.replicas:
                self.hosted[r].discard(pid)
            self.offline.discard(pid)
            self.parts[pid] = None

    # ----------------------------------------------------------------- cluster events
    def failover(self, controller: int, brokers: list[int]) -> list[int]:
        """onControllerFailover: replica machine startup, then partition machine startup."""
        self.controller_epoch += 1
        self.controller = controller
        self.live = set(brokers)
        self.shutting_down = set()
        # ReplicaStateMachine.startup: one OfflineReplica call for every replica on a
        # broker that is not live.
        dead = tuple(d for d in self.brokers if d not in self.live and self.hosted[d])
        for d in group_by_order(dead, SCALA_BINARY):
            for pid in sorted(self.hosted[d]):
                p = self.parts[pid]
                assert p is not None
                if not self._queued(p):
                    self._remove_from_isr(p, d)
        self.offline = {
            p.pid
            for p in self.parts
            if p is not None
            and not self._queued(p)
            and (p.leader == NO_LEADER or p.leader not in self.live)
        }
        return self.trigger_online()

    def broker_startup(self, new: list[int]) -> list[int]:
        """onBrokerStartup: retry every offline partition."""
        self.live |= set(new)
        return self.trigger_online()

    def broker_failure(self, dead: list[int]) -> list[int]:
        """onBrokerFailure -> onReplicasBecomeOffline."""
        for b in dead:
            self.live.discard(b)
            self.shutting_down.discard(b)
        not_online = set(dead) | self.shutting_down
        for b in sorted(not_online):
            for pid in self.hosted[b]:
                p = self.parts[pid]
                assert p is not None
                if p.leader == b and not self._queued(p):
                    self.offline.add(pid)
        elected = self.trigger_online()
        # One OfflineReplica call for the replicas (of topics not queued for deletion) on
        # the dead brokers.
        keys = tuple(b for b in sorted(dead) if self._hosts_live_topic(b))
        for b in group_by_order(keys, SCALA_BINARY):
            for pid in sorted(self.hosted[b]):
                p = self.parts[pid]
                assert p is not None
                if not self._queued(p):
                    self._remove_from_isr(p, b)
        return elected

    def controlled_shutdown(self, b: int) -> None:
        """ControlledShutdown (`doControlledShutdown`): move leadership off b, drop b from
        followed ISRs."""
        self.shutting_down.add(b)
        self.live.discard(b)
        sd = self.shutting_down
        for pid in sorted(self.hosted[b]):
            p = self.parts[pid]
            assert p is not None
            if len(p.replicas) <= 1 or self._queued(p):
                continue
            if p.leader == b:
                leader = next((r for r in p.replicas if r in self.live and r in p.isr), None)
                if leader is not None:
                    p.leader = leader
                    p.isr = tuple(r for r in p.isr if r not in sd)
                    p.epoch += 1
            else:
                self._remove_from_isr(p, b)
