"""Pure tests: the scenario's checks (exit 2 with one line, before Spark starts), the seq
renumbering, and the core's per-topic unclean.leader.election.enable override."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobs.whatif import job
from jobs.whatif.facts import facts_from_arrow
from jobs.whatif.plan import resolve
from jobs.whatif.scenario import ScenarioError, parse_scenario
from schemas import event_types as ET
from statemachine.context import ReplayConfig
from statemachine.events import Event
from tests.helpers.core import final, replay_log
from tests.helpers.event_log import T0


def _no_spark(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("Spark must not start for a scenario refused early")


@pytest.mark.parametrize(("scenario", "message"), [
    ('[[variant]]\nname = "x"\ncolour = "red"\n', "unknown field(s) ['colour']"),
    ('[sweep]\nfail_every_broker = {at = "2026-11-20T00:00:40Z"}\n', "unknown field(s)"),
    ('[[variant]]\nname = "x"\ndrop = [{broker_id = 9}]\n', "broker 9 is never mentioned"),
    ('[[variant]]\nname = "x"\ntopic_config = {"zzz" = {min_insync_replicas = 2}}\n',
     "topic 'zzz' is never mentioned"),
    ('[[variant]]\nname = "x"\ninject = [{after_seq = 10, event_type = "IsrChanged", '
     'topic = "a", partition = 0}]\n', "missing isr for IsrChanged"),
    ('[[variant]]\nname = "x"\ninject = [{after_seq = 10, event_type = "PartitionCreated", '
     'topic = "a", partition = 5, replicas = [1, 1]}]\n', "replicas has duplicate broker ids"),
    ('[[variant]]\nname = "x"\ninject = [{after_seq = 7, event_type = "BrokerFailure", '
     'broker_id = 1}]\n', "after_seq 7 is not a seq of the log"),
    ('[[variant]]\nname = "x"\n[[variant]]\nname = "x"\n', "'x' is given twice"),
    ('[[variant]]\nname = "x"\ndrop = [{seq = 99999}]\n', "drop #1: matches no event"),
    ('[[variant]]\nname = "x"\ndrop = [{event_type = "IsrChanged", topic = "c"}]\n',
     "drop #1: matches no event"),
    ('[[variant]]\nname = "x"\ninject = [{at = 2026-11-20T00:00:40Z, event_type = '
     '"BrokerFailure", broker_id = 1, for = "soon"}]\n', "is not a duration"),
    ('[[variant]]\nname = "x"\ninject = [{at = 2026-11-20T00:00:40Z, event_type = '
     '"BrokerStartup", broker_id = 1, for = "5m"}]\n', "for restarts a broker"),
    ('[[variant]]\nname = "baseline"\n', "reserved"),
    # The log runs from T0 + 1 s to T0 + 100 s: a failure a day later, or before it began,
    # would replay as a log it is not.
    ('[[variant]]\nname = "x"\ninject = [{at = 2026-11-21T00:00:40Z, event_type = '
     '"BrokerFailure", broker_id = 1}]\n', "at 2026-11-21T00:00:40Z is outside the log's "
     "time range (events from 2026-11-20T00:00:01Z to 2026-11-20T00:01:40Z)"),
    ('[sweep]\nfail_each_broker = {at = "2026-11-19T23:00:00Z"}\n',
     "at 2026-11-19T23:00:00Z is outside the log's time range"),
    ('[[variant]]\nname = "fail-broker-1"\n[sweep]\nfail_each_broker = '
     '{at = "2026-11-20T00:00:40Z"}\n', "'fail-broker-1' is given twice"),
])
def test_bad_scenario_exits_2_with_one_line_before_spark(
    small_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], scenario: str, message: str,
) -> None:
    monkeypatch.setattr(job, "build_session", _no_spark)
    path = tmp_path / "bad.toml"
    path.write_text(scenario)
    rc = job.main(["--events", str(small_log), "--scenario", str(path),
                   "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1, err
    assert message in err


def test_an_at_outside_the_log_is_refused(
        small_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The log's events run from T0 + 1 s to T0 + 100 s: its first and last times are
    inside, a second after the last is not."""
    monkeypatch.setattr(job, "build_session", _no_spark)

    def run(at: str) -> int:
        path = tmp_path / "at.toml"
        path.write_text(f'[[variant]]\nname = "x"\ninject = [{{at = {at}, event_type = '
                        '"BrokerFailure", broker_id = 1}]\n')
        return job.main(["--events", str(small_log), "--scenario", str(path),
                         "--out", str(tmp_path / "out")])

    assert run("2026-11-20T00:01:41Z") == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "at 2026-11-20T00:01:41Z is outside the log's time range" in line
    facts = facts_from_arrow(str(small_log))
    assert facts is not None
    [cluster] = facts.clusters.values()
    assert cluster.outside(int(T0.timestamp() * 1e6) + 1_000_000) is None
    assert cluster.outside(int(T0.timestamp() * 1e6) + 100_000_000) is None
    assert cluster.outside(int(T0.timestamp() * 1e6)) is not None


def test_seq_renumbering(small_log: Path) -> None:
    """Two injections after seq 10 (the second in scenario order gets the next seq) and one
    at a time before seq 2's: every later event of the log shifts by the injections before
    it."""
    facts = facts_from_arrow(str(small_log))
    assert facts is not None
    scenario = parse_scenario({"variant": [{"name": "v", "inject": [
        {"after_seq": 10, "event_type": ET.BROKER_FAILURE, "broker_id": 2},
        {"after_seq": 10, "event_type": ET.BROKER_STARTUP, "broker_id": 2},
        {"at": T0.replace(second=1), "event_type": ET.BROKER_FAILURE, "broker_id": 3},
    ]}]})
    baseline, plan = resolve(scenario, ReplayConfig(), facts)
    assert baseline.name == "baseline" and not baseline.injected
    injected = plan.injected["default"]
    assert [(e.seq, e.event_type, e.broker_id) for e in injected] == [
        (2, ET.BROKER_FAILURE, 3), (12, ET.BROKER_FAILURE, 2), (13, ET.BROKER_STARTUP, 2)]
    assert [plan.renumber("default", s) for s in (1, 2, 10, 11, 100)] == [1, 3, 11, 14, 103]
    assert injected[1].ts == 10_000_000 + int(T0.timestamp() * 1e6)  # the ts of seq 10


def test_scenario_shape_errors() -> None:
    with pytest.raises(ScenarioError, match="exactly one of at, after_seq"):
        parse_scenario({"variant": [{"name": "v", "inject": [{"event_type": "X"}]}]})
    with pytest.raises(ScenarioError, match="must be bool"):
        parse_scenario({"variant": [{"name": "v", "config": {"delete_topic_enable": 1}}]})


def test_topic_override_of_unclean_election_wins_over_the_log() -> None:
    """`ReplayConfig.topic_unclean_leader_election_enable`: the forced value wins over the
    topic's own setting from the log (here an explicit `false` at creation), for that topic
    only."""
    s = 1_000_000
    events = [
        Event(1, s, ET.CONTROLLER_FAILOVER, broker_id=1, brokers=(1, 2, 3)),
        Event(2, 2 * s, ET.PARTITION_CREATED, topic="b", partition=0, replicas=(2, 3),
              unclean_leader_election=False),
        Event(2, 2 * s, ET.PARTITION_CREATED, topic="e", partition=0, replicas=(2, 3),
              unclean_leader_election=False),
        Event(3, 3 * s, ET.ISR_CHANGED, topic="b", partition=0, isr=(2,), leader_epoch=0),
        Event(3, 3 * s, ET.ISR_CHANGED, topic="e", partition=0, isr=(2,), leader_epoch=0),
        Event(4, 4 * s, ET.BROKER_FAILURE, broker_id=2),
    ]
    _, plain = replay_log(events)
    assert final(plain, "b", 0).state == "OfflinePartition"
    _, forced = replay_log(events, ReplayConfig(topic_unclean_leader_election_enable=(
        ("b", True),)))
    assert final(forced, "b", 0)[:3] == ("OnlinePartition", 3, (3,))
    assert final(forced, "e", 0).state == "OfflinePartition"
    assert [(f.kind, f.topic) for f in forced.findings
            if f.kind == "unclean_leader_election"] == [("unclean_leader_election", "b")]


def test_eligible_leader_replicas_are_refused_on_a_zookeeper_log(small_log: Path) -> None:
    """KIP-966 is a KRaft controller's: a ZooKeeper log's variant cannot turn it on."""
    facts = facts_from_arrow(str(small_log))
    assert facts is not None
    scenario = parse_scenario({"variant": [{
        "name": "v", "config": {"eligible_leader_replicas_enable": True}}]})
    with pytest.raises(ScenarioError) as refused:
        resolve(scenario, ReplayConfig(), facts)
    assert "is a KRaft setting (KIP-966); the log is a ZooKeeper event log" in str(refused.value)
