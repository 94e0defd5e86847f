"""The KRaft fold (`statemachine.kraft.fold`) on histories whose records are those Kafka
3.7.0's controller writes, derived by hand from `ReplicationControlManager` and
`PartitionChangeBuilder` (metadata version 3.7-IV4: fences and unfences are
`BrokerRegistrationChangeRecord`s, `MetadataVersion.isBrokerRegistrationChangeRecordSupported`
from 3.3-IV2, `MetadataVersion.java:343-345`; an ISR shrink names no leader,
`isLeaderEpochBumpRequiredOnIsrShrink` before 3.6-IV0 only, `:309-311`)."""

from __future__ import annotations

from statemachine.incidents import elections_of, incidents
from statemachine.kraft import records as K
from statemachine.kraft.fold import fold
from statemachine.kraft.records import MetadataRecord
from statemachine.rows import BrokerIntervalRow, ControllerRow, PartitionWindowRow
from tests.helpers.kraft_history import (
    BRCR,
    FENCED,
    PCR,
    SHUTDOWN,
    TID,
    UNFENCED,
    batch,
    fence_1,
    leader_change,
    pcr,
    setup,
    states,
    topic_config,
    unfence_1,
)

# The batch of each record offset the windows below start or end at: a record's time is
# its batch's CreateTime.
BATCH_OF = {11: 7, 20: 20, 21: 20, 22: 20, 23: 20, 30: 30, 31: 30, 40: 40}


def win(p: int, kind: str, start: int, end: int | None, cause: tuple[str, int | None],
        end_cause: tuple[str | None, int | None] = (None, None),
        event: int | None = None) -> PartitionWindowRow:
    """A window from `start` to `end` (record offsets); `event`: the offset of the event
    it belongs to when it is not `start` (a broker operation whose batch holds the
    partition's own record: the window sits at that record, its incident is the
    operation's broker record)."""
    incident = (start if event is None else event) if kind in ("offline",
                                                               "under_min_isr") else None
    start_ts = BATCH_OF[start] * 10**6
    end_ts = None if end is None else BATCH_OF[end] * 10**6
    return PartitionWindowRow(
        "orders", p, kind, start, start_ts, end, end_ts,
        None if end_ts is None else (end_ts - start_ts) / 1e6, cause[0], cause[1],
        end_cause[0], end_cause[1], incident)


def test_fence_then_unfence_windows_epochs_and_incident_by_hand() -> None:
    records = [*setup(), *fence_1(20), *leader_change(29, 2, 3001), *unfence_1(30, 2),
               # p1's leader adds 1 back (AlterPartition): its own event.
               *batch(40, 2, pcr(1, isr=(2, 1)))]
    out = fold(records)
    created = (K.PARTITION, None)
    fenced = (FENCED, 1)
    # Each window sits at the partition's own record of the fence's batch (p0 at 20, p1
    # at 21, p2 at 22) and belongs to the fence (23); p2's ends at its own election (31),
    # which belongs to the unfence (30).
    assert out.partition_windows == [
        # Closed, in the order they closed.
        win(2, "offline", 22, 31, fenced, (UNFENCED, 1), event=23),
        win(1, "under_min_isr", 21, 40, fenced, (PCR, None), event=23),
        win(1, "under_replicated", 21, 40, fenced, (PCR, None)),
        # Open at the end: p0 has ISR [2, 3] of 3, p2 ISR [1] of 2 (and of min 2).
        win(0, "under_replicated", 20, None, fenced),
        win(2, "under_min_isr", 11, None, created),
        win(2, "under_replicated", 11, None, created),
    ]
    # merge: p0 leader 1 -> 2 (epoch 1); p1 two ISR changes (partition epoch 2, leader
    # epoch 0); p2 leader -1 then 1 (leader epoch 2, partition epoch 2). Controller epoch:
    # the quorum epoch of the batch that last wrote the partition.
    assert states(out) == [
        (0, "OnlinePartition", 2, 1, (2, 3), 1, 1, "RECOVERED"),
        (1, "OnlinePartition", 2, 0, (2, 1), 2, 2, "RECOVERED"),
        (2, "OnlinePartition", 1, 2, (1,), 2, 2, "RECOVERED"),
    ]
    # Incident 11 is p2 created under its min.insync.replicas; 23 is the fence.
    first, incident = incidents(out.partition_windows, as_of=50 * 10**6)
    assert (first.incident_id, first.cause_event, first.end_seq) == (11, K.PARTITION, None)
    assert (incident.incident_id, incident.cause_event, incident.cause_broker,
            incident.peak_partitions_offline, incident.partitions_affected,
            incident.end_seq, incident.recovery_event) == (23, FENCED, 1, 1, 2, 40, PCR)
    assert out.counts.applied == 18 and out.counts.control == 2 and out.findings == []


def test_broker_and_controller_timelines() -> None:
    out = fold([*setup(), *fence_1(20), *leader_change(29, 2, 3001), *unfence_1(30, 2)])
    us = 10**6
    assert out.broker_timeline == [
        BrokerIntervalRow(1, "dead", 1, 4, 1 * us, 4 * us),  # registered fenced
        BrokerIntervalRow(1, "live", 4, 23, 4 * us, 20 * us),
        BrokerIntervalRow(1, "dead", 23, 30, 20 * us, 30 * us),
        BrokerIntervalRow(2, "dead", 2, 5, 1 * us, 4 * us),
        BrokerIntervalRow(3, "dead", 3, 6, 1 * us, 4 * us),
        BrokerIntervalRow(1, "live", 30, None, 30 * us, None),
        BrokerIntervalRow(2, "live", 5, None, 4 * us, None),
        BrokerIntervalRow(3, "live", 6, None, 4 * us, None),
    ]
    assert out.controller_timeline == [ControllerRow(3000, 1, 0, 0, ()),
                                       ControllerRow(3001, 2, 29, 29 * us, (2, 3))]


def test_only_isr_member_fenced_goes_offline_at_the_fence() -> None:
    out = fold([*setup(), *fence_1(20)])
    offline = [w for w in out.partition_windows if w.kind == "offline"]
    assert offline == [win(2, "offline", 22, None, (FENCED, 1), event=23)]
    assert states(out)[2] == (2, "OfflinePartition", -1, 1, (1,), 1, 1, "RECOVERED")


def test_unclean_election_ending_an_offline_window_counts_in_its_incident() -> None:
    """An admin unclean election (`ReplicationControlManager.electLeaders`, election type
    UNCLEAN) of the offline p2: `electAnyLeader`'s unclean branch takes 3, the ISR is
    forced to [3] and the leader is RECOVERING (`tryElection`, 3.7.0
    `PartitionChangeBuilder.java:332-365`)."""
    out = fold([*setup(), *fence_1(20),
                *batch(30, 1, pcr(2, leader=3, isr=(3,), leader_recovery_state=K.RECOVERING))])
    assert win(2, "offline", 22, 30, (FENCED, 1), (PCR, None), event=23) in out.partition_windows
    assert states(out)[2] == (2, "OnlinePartition", 3, 2, (3,), 2, 1, "RECOVERING")
    (finding,) = out.findings
    assert (finding.seq, finding.topic, finding.partition, finding.kind) == (
        30, "orders", 2, "unclean_leader_election")
    by_id = {i.incident_id: i for i in incidents(out.partition_windows,
                                                 elections_of(out.findings), as_of=0)}
    assert by_id[23].unclean_elections == 1


def test_fence_without_partition_changes_still_takes_the_leader_away() -> None:
    """A fence record alone (partitions changed elsewhere, e.g. before a snapshot): the
    leader is no unfenced broker, so the partition is offline from the fence."""
    out = fold([*setup(), *batch(20, 1, (BRCR, dict(broker_id=1, broker_epoch=10,
                                                     fenced=True)))])
    offline = sorted((w.partition, w.start_seq, w.cause_event, w.cause_broker)
                     for w in out.partition_windows if w.kind == "offline")
    assert offline == [(0, 20, FENCED, 1), (2, 20, FENCED, 1)]


def test_topic_deletion_closes_its_windows_and_removes_its_partitions() -> None:
    records = [*setup(), *fence_1(20),
               *batch(30, 1, (K.REMOVE_TOPIC, dict(topic_id=TID)))]
    out = fold(records)
    assert out.partition_states == []
    assert all(w.end_seq is not None for w in out.partition_windows)
    removed = [(w.partition, w.kind) for w in out.partition_windows
               if (w.end_event, w.end_broker, w.end_seq) == (K.REMOVE_TOPIC, None, 30)]
    assert removed == [(0, "under_replicated"), (1, "under_min_isr"),
                       (1, "under_replicated"), (2, "offline"), (2, "under_min_isr"),
                       (2, "under_replicated")]


def test_aborted_transaction_changes_nothing_and_is_counted() -> None:
    def aborted(base: int, state: str) -> list[MetadataRecord]:
        return [r._replace(transaction=state) for r in batch(
            base, 1, ("BeginTransactionRecord", {}),
            (BRCR, dict(broker_id=1, broker_epoch=10, fenced=True)),
            pcr(2, leader=-1), ("AbortTransactionRecord", {}))]

    plain = fold(setup())
    out = fold([*setup(), *aborted(20, K.ABORTED), *aborted(30, K.OPEN)[:3]])
    assert out.partition_windows == plain.partition_windows
    assert out.partition_states == plain.partition_states
    assert out.broker_timeline == plain.broker_timeline
    assert (out.counts.aborted, out.counts.open_transaction) == (4, 3)


def test_noops_unknown_and_unmodelled_records_are_skipped_and_counted() -> None:
    out = fold([*setup(), *batch(20, 1, (K.NOOP, {}), (K.NOOP, {}), (K.UNKNOWN, {}),
                                 ("FeatureLevelRecord", {}),
                                 (BRCR, dict(broker_id=7, broker_epoch=1, fenced=True)))])
    assert (out.counts.noops, out.counts.unknown, dict(out.counts.not_modelled),
            out.counts.rejected) == (2, 1, {"FeatureLevelRecord": 1}, 1)
    (finding,) = out.findings
    assert (finding.kind, finding.seq, finding.broker_id) == (
        "metadata_record_rejected", 24, 7)


def test_controlled_shutdown_moves_leadership_after_the_registration_change() -> None:
    """`handleBrokerInControlledShutdown(1)` (`:1363-1373`): the registration change
    first, then the ISR removals and leadership moves; broker 1 stays unfenced."""
    out = fold([*setup(), *batch(
        20, 1, (BRCR, dict(broker_id=1, broker_epoch=10, in_controlled_shutdown=True)),
        pcr(0, leader=2, isr=(2, 3)), pcr(1, isr=(2,)), pcr(2, leader=-1))])
    opened = sorted((w.partition, w.kind, w.start_seq, w.cause_event, w.cause_broker,
                     w.incident_id) for w in out.partition_windows if w.start_seq >= 20)
    # At each partition's own record (21, 22, 23), of the shutdown's incident (20).
    assert opened == [(0, "under_replicated", 21, SHUTDOWN, 1, None),
                      (1, "under_min_isr", 22, SHUTDOWN, 1, 20),
                      (1, "under_replicated", 22, SHUTDOWN, 1, None),
                      (2, "offline", 23, SHUTDOWN, 1, 20)]
    assert [(r.broker_id, r.status) for r in out.broker_timeline if r.seq_to is None] == [
        (1, "shutting_down"), (2, "live"), (3, "live")]


def test_min_isr_change_opens_and_closes_under_min_isr() -> None:
    out = fold([*setup(), *batch(20, 1, topic_config(K.MIN_ISR, "1")),
                *batch(21, 1, topic_config(K.MIN_ISR, None)),
                *batch(22, 1, (K.CONFIG, dict(config_resource_type="BROKER",
                                               config_resource="", config_name=K.MIN_ISR,
                                               config_value="3")))])
    got = [(w.partition, w.start_seq, w.end_seq, w.cause_event)
           for w in out.partition_windows if w.kind == "under_min_isr"]
    # p2 (ISR 1): closed by min 1 at 20; min back to the default 1 at 21; cluster 3 at 22
    # opens every partition whose ISR is below 3 (p1 and p2; p0 has 3).
    assert got == [(2, 11, 20, K.PARTITION),
                   (1, 22, None, K.CONFIG), (2, 22, None, K.CONFIG)]
