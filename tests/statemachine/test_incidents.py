"""Incidents (`statemachine.incidents`): hand-made logs with hand-derived incidents, the
windows' `incident_id`, nights that add up to one replay at every cut, and the simulated
sample log."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.context import Outputs, ReplayConfig
from statemachine.incidents import (
    Election,
    elections_of,
    incidents,
    latest_windows,
    of_run,
    peak_offline,
    window_us,
)
from statemachine.model import BucketState
from statemachine.replay import replay
from statemachine.rows import BrokerShare, IncidentRow, PartitionWindowRow, TopicSeconds
from tests.helpers.core import Log, replay_log, split, two_brokers_lost

SECOND = 1_000_000  # ts are microseconds


def of(out: Outputs, as_of: int | None = None) -> list[IncidentRow]:
    return incidents(out.partition_windows, elections_of(out.findings), as_of)


# -- one broker failure ------------------------------------------------------------------------


def _one_failure() -> tuple[Log, int, int, int]:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.create("t", 0, [1])  # RF 1: offline until 1 returns
    log.create("t", 1, [1, 3])
    log.isr("t", 1, [1])  # 3 out of sync: offline until an unclean election
    log.create("u", 0, [1, 2])  # 2 takes over: under-replicated only, no incident
    log.create("v", 0, [1])
    fail = log.failure(1)
    unclean = log.unclean("t", 1)  # elects 3: data may be lost
    back = log.startup(1)
    return log, fail, unclean, back


def test_one_broker_failure_is_one_incident() -> None:
    log, fail, unclean, back = _one_failure()
    _, out = replay_log(log)
    assert of(out) == [IncidentRow(
        incident_id=fail, cause_event=ET.BROKER_FAILURE, cause_broker=1, cause_seq=fail,
        start_ts=fail * SECOND, end_ts=back * SECOND, end_seq=back,
        seconds=float(back - fail),
        peak_partitions_offline=3, partitions_affected=3, topics_affected=2,
        # t-1 for (unclean - fail) seconds, t-0 and v-0 for (back - fail); under min ISR
        # (min.insync.replicas 1) exactly while offline.
        offline_partition_seconds=float((unclean - fail) + 2 * (back - fail)),
        under_min_isr_partition_seconds=float((unclean - fail) + 2 * (back - fail)),
        unclean_elections=1,
        recovery_event=ET.BROKER_STARTUP, recovery_broker=1,
        worst_topics=(TopicSeconds("t", 3.0, 3.0), TopicSeconds("v", 2.0, 2.0)),
        brokers=(BrokerShare(1, 3, float((unclean - fail) + 2 * (back - fail)),
                             float((unclean - fail) + 2 * (back - fail)),
                             float(back - fail)),))]


def test_incident_windows_carry_its_id_and_their_end_broker() -> None:
    log, fail, unclean, back = _one_failure()
    _, out = replay_log(log)
    assert sorted((w.topic, w.partition, w.kind, w.incident_id, w.end_event, w.end_broker)
                  for w in out.partition_windows) == [
        ("t", 0, "offline", fail, ET.BROKER_STARTUP, 1),
        ("t", 0, "under_min_isr", fail, ET.BROKER_STARTUP, 1),
        ("t", 1, "offline", fail, ET.UNCLEAN_LEADER_ELECTION, None),
        ("t", 1, "under_min_isr", fail, ET.UNCLEAN_LEADER_ELECTION, None),
        # Not kinds of an incident; both still open.
        ("t", 1, "under_replicated", None, None, None),
        ("u", 0, "under_replicated", None, None, None),
        ("v", 0, "offline", fail, ET.BROKER_STARTUP, 1),
        ("v", 0, "under_min_isr", fail, ET.BROKER_STARTUP, 1),
    ]


def test_an_under_min_isr_shrink_is_an_incident_without_offline_partitions() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.create("t", 0, [1, 2, 3])
    shrink = log.isr("t", 0, [1])
    grow = log.isr("t", 0, [1, 2])
    _, out = replay_log(log, ReplayConfig(min_insync_replicas=2))
    [incident] = of(out)
    assert (incident.incident_id, incident.cause_event, incident.cause_broker,
            incident.peak_partitions_offline, incident.offline_partition_seconds,
            incident.under_min_isr_partition_seconds, incident.end_seq,
            incident.recovery_event) == (
        shrink, ET.ISR_CHANGED, None, 0, 0.0, float(grow - shrink), grow, ET.ISR_CHANGED)


# -- two overlapping failures -----------------------------------------------------------------


def test_two_overlapping_failures_are_two_incidents() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.create("t", 0, [1])  # offline at the first failure
    log.create("t", 1, [1, 2])  # 2 takes over at the first, offline at the second
    log.create("u", 0, [2])  # offline at the second
    first = log.failure(1)
    second = log.failure(2)
    one_back = log.startup(1)  # t-0 back; t-1 elects 1 (in its ISR? no: ISR [2])
    two_back = log.startup(2)
    _, out = replay_log(log)

    by_window = {(w.topic, w.partition): w.incident_id
                 for w in out.partition_windows if w.kind == "offline"}
    assert by_window == {("t", 0): first, ("t", 1): second, ("u", 0): second}
    a, b = of(out)
    assert (a.incident_id, a.cause_broker, a.partitions_affected, a.end_seq,
            a.recovery_broker, a.offline_partition_seconds) == (
        first, 1, 1, one_back, 1, float(one_back - first))
    assert (b.incident_id, b.cause_broker, b.partitions_affected, b.topics_affected,
            b.peak_partitions_offline, b.end_seq, b.recovery_broker) == (
        second, 2, 2, 2, 2, two_back, 2)
    assert b.offline_partition_seconds == float(2 * (two_back - second))


# -- the controller's broker dies -------------------------------------------------------------


def test_a_dead_controller_broker_is_the_cause_of_the_incident_its_failover_opens() -> None:
    log = Log(tick=SECOND)
    log.failover(1, [1, 2, 3])
    log.create("t", 0, [1])  # led by 1 alone: offline
    log.create("t", 1, [1, 2])  # 2 takes over: no incident window
    log.create("u", 0, [1])  # offline
    moved = log.failover(2, [2, 3])
    log.isr("t", 1, [2])
    _, out = replay_log(log)
    as_of = log.seq * SECOND
    [incident] = of(out, as_of)
    assert (incident.incident_id, incident.cause_event, incident.cause_broker,
            incident.partitions_affected, incident.peak_partitions_offline) == (
        moved, ET.CONTROLLER_FAILOVER, 1, 2, 2)
    # Still open: no end, no recovery; its open windows count up to `as_of`.
    assert (incident.end_ts, incident.end_seq, incident.seconds, incident.recovery_event,
            incident.recovery_broker) == (None, None, None, None, None)
    assert incident.offline_partition_seconds == float(2 * (log.seq - moved))


def test_the_cause_is_the_broker_most_windows_name() -> None:
    """Two brokers fail in one event: each window names the broker its partition lost."""
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.create("t", 0, [1])
    log.create("t", 1, [2])
    log.create("t", 2, [2])
    both = log.failure(1, 2)
    _, out = replay_log(log)
    assert {(w.partition, w.cause_broker) for w in out.partition_windows} == {
        (0, 1), (1, 2), (2, 2)}
    [incident] = of(out)
    assert (incident.incident_id, incident.cause_broker) == (both, 2)
    assert [(b.broker_id, b.partitions) for b in incident.brokers] == [(1, 1), (2, 2)]


def test_one_broker_change_that_lost_two_brokers_names_both_with_their_shares() -> None:
    """ZooKeeper's /brokers/ids watch fires once for two lost registrations
    (`KafkaController.processBrokerChange`, 3.7.1): one event, one incident. Broker 3 is
    back 86 s later, broker 5 after 442 s, the incident's length."""
    log, change, back3, back5 = two_brokers_lost(SECOND)
    _, out = replay_log(log)
    [incident] = of(out)
    assert (incident.incident_id, incident.cause_event, incident.seconds) == (
        change, ET.BROKER_FAILURE, 442.0)
    assert incident.brokers == (BrokerShare(3, 1, 86.0, 86.0, float(back3 - change)),
                                BrokerShare(5, 2, 884.0, 884.0, float(back5 - change)))
    # Open at the end of a night between the two returns: broker 3's share is closed,
    # broker 5's counts up to the night's last event.
    night = [w for w in out.partition_windows if w.start_seq == change]
    opened = [w._replace(end_seq=None, end_ts=None, seconds=None) if w.cause_broker == 5
              else w for w in night]
    [still] = incidents(opened, as_of=(change + 100) * SECOND)
    assert [(b.broker_id, b.offline_partition_seconds, b.seconds) for b in still.brokers] \
        == [(3, 86.0, 86.0), (5, 200.0, None)]


# -- the pure roll-up -------------------------------------------------------------------------


def _w(topic: str, partition: int, kind: str, start: int, end: int | None,
       end_event: str | None = None) -> PartitionWindowRow:
    return PartitionWindowRow(topic, partition, kind, start, start * SECOND, end,
                              None if end is None else end * SECOND,
                              None if end is None else float(end - start),
                              ET.BROKER_FAILURE, 1, end_event, None, None)


def test_peak_sweeps_over_the_windows_closings_first() -> None:
    rows = [_w("t", 0, "offline", 5, 7), _w("t", 1, "offline", 7, 9),
            _w("t", 2, "offline", 8, None), _w("t", 3, "under_min_isr", 5, 9)]
    assert peak_offline(rows) == 2  # t-1 and t-2 from 8; t-0 closed as t-1 opened


def test_latest_windows_keep_the_closed_row_and_skip_other_kinds() -> None:
    opened = _w("t", 0, "offline", 5, None)
    shut = _w("t", 0, "offline", 5, 9, ET.BROKER_STARTUP)
    other = _w("t", 0, "under_replicated", 5, None)
    assert latest_windows([shut, opened, other]) == [shut]
    assert latest_windows([opened, shut]) == [shut]
    # Rows written before the column existed name their incident by their start seq.
    assert [i.incident_id for i in incidents([opened])] == [5]


def test_open_windows_count_up_to_as_of() -> None:
    assert window_us(_w("t", 0, "offline", 5, None), 8 * SECOND) == 3 * SECOND
    assert window_us(_w("t", 0, "offline", 5, None), None) == 0
    assert window_us(_w("t", 0, "offline", 5, 6), 8 * SECOND) == SECOND


def test_unclean_elections_count_inside_the_incident_on_its_partitions() -> None:
    rows = [_w("t", 0, "offline", 5, 9)]
    elections = [Election(4, "t", 0), Election(5, "t", 0), Election(9, "t", 0),
                 Election(10, "t", 0), Election(6, "t", 1)]
    [incident] = incidents(rows, elections)
    assert incident.unclean_elections == 2


def test_worst_topics_rank_offline_then_under_min_isr_seconds() -> None:
    rows = [_w(t, p, "offline", 5, 5 + n) for t, p, n in (("a", 0, 1), ("b", 0, 3))]
    rows += [_w(f"c{i}", 0, "under_min_isr", 5, 6 + i) for i in range(5)]
    [incident] = incidents(rows)
    assert [t.topic for t in incident.worst_topics] == ["b", "a", "c4", "c3", "c2"]


# -- nights add up to the full replay ---------------------------------------------------------


def _nights() -> Log:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.create("t", 0, [1])
    log.create("t", 1, [1, 3])
    log.isr("t", 1, [1])
    log.create("u", 0, [2])
    log.failure(1)  # t-0, t-1 offline
    log.failure(2)  # u-0 offline
    log.unclean("t", 1)
    log.startup(2)
    log.startup(1)
    log.failure(3)  # t-1 (now led by 3) offline, open at the end
    return log


def _latest(*tables: list[IncidentRow]) -> list[IncidentRow]:
    latest: dict[int, IncidentRow] = {}
    for table in tables:
        latest.update({i.incident_id: i for i in table})
    return [latest[k] for k in sorted(latest)]


@pytest.mark.parametrize("cut", range(1, 12))
def test_two_nights_list_the_incidents_of_one_replay(cut: int) -> None:
    log = _nights()
    as_of = log.seq * SECOND
    cluster, other = split(log.events)
    _, one = replay(None, other, build_timeline(cluster))
    full = of(one, as_of)
    assert len(full) == 3 and full[-1].end_seq is None

    s1, day1 = replay(None, [e for e in other if e.seq <= cut],
                      build_timeline([e for e in cluster if e.seq <= cut]))
    _, day2 = replay(BucketState.from_bytes(s1.to_bytes()),
                     [e for e in other if e.seq > cut], build_timeline(cluster))
    night1 = of_run(day1.partition_windows, day1.partition_windows,
                    elections_of(day1.findings), min(cut, log.seq) * SECOND)
    both = day1.partition_windows + day2.partition_windows
    night2 = of_run(both, day2.partition_windows,
                    elections_of(day1.findings + day2.findings), as_of)
    assert _latest(night1, night2) == full
    # The second night lists every incident still open after the first.
    assert {i.incident_id for i in night1 if i.end_seq is None} <= {
        i.incident_id for i in night2}


# -- the simulated sample log -----------------------------------------------------------------


def test_sample_log_offline_windows_add_up_to_their_incidents(tmp_path: Path) -> None:
    from jobs.bench.core import fold_groups, group_log, read_log, sort_log
    from jobs.sim.cli import simulate

    simulate(str(tmp_path), "sample", 1)
    res = fold_groups(group_log(sort_log(read_log(tmp_path))), keep_outputs=True)
    assert {cluster for cluster, _ in res.outputs} == {"default"}
    groups = {w: group for group, out in res.outputs.items() for w in out.partition_windows}
    rows = list(groups)
    offline = [w for w in rows if w.kind == "offline"]
    assert offline and all(w.incident_id == w.start_seq for w in offline)
    # The windows of an incident come from several replay groups.
    assert any(len({groups[w] for w in offline if w.incident_id == iid}) > 1
               for iid in {w.incident_id for w in offline})
    as_of = max(int(w.end_ts if w.end_ts is not None else w.start_ts) for w in rows)
    found = {i.incident_id: i for i in incidents(rows, (), as_of)}
    for iid, incident in found.items():
        mine = [w for w in offline if w.incident_id == iid]
        assert incident.offline_partition_seconds == pytest.approx(
            sum(window_us(w, as_of) for w in mine) / 1e6)
        assert incident.peak_partitions_offline == len(mine)  # all open at its event
    assert {w.incident_id for w in offline} <= set(found)
