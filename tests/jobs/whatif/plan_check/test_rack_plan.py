"""A plan checked against a small cluster's state, derived by hand (pure: pyarrow + core).

Six brokers on three racks, a = {1, 2}, b = {3, 4}, c = {5, 6}, min.insync.replicas 2:

    orders-0  replicas [1, 3, 5]  leader 1  isr [1, 3, 5]
    orders-1  replicas [2, 4, 6]  leader 2  isr [2, 4, 6]
    clicks-0  replicas [1, 2]     leader 1  isr [1, 2]     (both replicas on rack a)
    clicks-1  replicas [3, 5]     leader 3  isr [3, 5]
    clicks-2  replicas [4, 1]     leader 4  isr [4, 1]

The plan: 1. shut down rack a; 2. fail broker 3; 3. restart rack a; 4. min.insync.replicas
of orders to 3. By Kafka's rules (`KafkaController.doControlledShutdown` moves a leadership
to another live ISR member, `onBrokerFailure` shrinks the ISR and elects from the live ISR;
3.7.1):

* step 1: clicks-0 has no replica left outside rack a: OFFLINE. clicks-2 keeps [4]: under
  min ISR. orders-0 keeps [3, 5], orders-1 [4, 6]: at min ISR, fine.
* step 2: orders-0 keeps [5] and clicks-1 keeps [5]: both under min ISR.
* step 3: rack a back, its replicas rejoin the ISR of the partitions with a leader: orders-0
  [5, 1]; nothing new goes wrong.
* step 4: orders-0 has 2 in-sync replicas, its new min ISR is 3: under min ISR.

Advice: no reorder keeps clicks-0 online (rack a goes down whatever the order), so a
replica moves first: replica 1 to broker 4, the first broker the plan keeps alive on
another rack (b) -> [4, 2]. clicks-1 at step 2: replica 3 to broker 4 -> [4, 5].
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.whatif.job import main
from jobs.whatif.plan_check.check import OFFLINE, REASSIGN_FIRST, REORDER, UNDER_MIN_ISR
from schemas.arrow import arrow_schema
from schemas.tables import KRAFT_TABLES, TABLES

PARTS = [("orders", 0, 1, [1, 3, 5]), ("orders", 1, 2, [2, 4, 6]), ("clicks", 0, 1, [1, 2]),
         ("clicks", 1, 3, [3, 5]), ("clicks", 2, 4, [4, 1])]
PLAN = """
[racks]
1 = "a"
2 = "a"
3 = "b"
4 = "b"
5 = "c"
6 = "c"

[settings]
min_insync_replicas = 2

[[step]]
name = "patch rack a"
action = "shutdown"
rack = "a"

[[step]]
action = "fail"
brokers = [3]

[[step]]
action = "restart"
rack = "a"

[[step]]
action = "config"
topic = "orders"
min_insync_replicas = 3
"""


def _write(out: Path, table: str, rows: list[dict[str, object]], run: str = "night-1") -> None:
    where = out / table / f"run_id={run}"
    where.mkdir(parents=True)
    schema = arrow_schema({**TABLES, **KRAFT_TABLES}[table])
    full = [{f: r.get(f) for f in schema.names} | {"cluster": "default", "run_id": run}
            for r in rows]
    pq.write_table(pa.Table.from_pylist(full, schema=schema).drop_columns(["run_id"]),
                   str(where / "part-0.parquet"))


def zookeeper_tables(out: Path) -> Path:
    """The tables a ZooKeeper-mode replay of this cluster writes (the columns the state
    is read from)."""
    _write(out, "partition_states", [
        {"topic": t, "partition": p, "state": "OnlinePartition", "leader": leader,
         "leader_epoch": 4, "isr": replicas, "replicas": replicas, "adding_replicas": [],
         "removing_replicas": [], "zk_version": 7, "controller_epoch": 3,
         "leader_recovery_state": "RECOVERED", "queued_for_deletion": False, "last_seq": 90}
        for t, p, leader, replicas in PARTS])
    _write(out, "broker_timeline", [{"broker_id": b, "status": "live", "seq_from": 1}
                                    for b in range(1, 7)])
    _write(out, "run_summary", [{"rows_read": 1}])
    return out


def kraft_tables(out: Path) -> Path:
    """The same cluster as a KRaft replay writes it: the same partition_states (its
    zk_version the partition epoch), and a metadata_writes table, which tells it apart."""
    zookeeper_tables(out)
    _write(out, "metadata_writes", [{"seq": 1, "record_type": "RegisterBrokerRecord",
                                     "broker_id": 1}])
    return out


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    path = tmp_path / "rack-a.toml"
    path.write_text(PLAN)
    return path


def _rows(out: Path) -> list[dict[str, object]]:
    return pq.read_table(out / "plan_check" / "run_id=rack-a").to_pylist()


def test_zookeeper_tables_hand_derived(tmp_path: Path, plan_file: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    state = zookeeper_tables(tmp_path / "tables")
    code = main(["--from-state", str(state), "--plan", str(plan_file),
                 "--out", str(tmp_path / "plan")])
    assert code == 1  # step 1 takes clicks-0 offline
    rows = _rows(tmp_path / "plan")
    found = {(r["step"], r["topic"], r["partition"], r["finding"]) for r in rows}
    assert found == {(1, "clicks", 0, OFFLINE), (1, "clicks", 2, UNDER_MIN_ISR),
                     (2, "orders", 0, UNDER_MIN_ISR), (2, "clicks", 1, UNDER_MIN_ISR),
                     (4, "orders", 0, UNDER_MIN_ISR)}
    assert [r["rank"] for r in rows] == list(range(1, 6))
    first = rows[0]
    assert (first["topic"], first["partition"], first["finding"]) == ("clicks", 0, OFFLINE)
    assert first["advice_kind"] == REASSIGN_FIRST
    assert "to [4, 2]" in str(first["advice"]) and "broker 4 (rack b)" in str(first["advice"])
    clicks1 = next(r for r in rows if (r["topic"], r["partition"]) == ("clicks", 1))
    assert clicks1["isr_after"] == [5] and "to [4, 5]" in str(clicks1["advice"])
    step4 = next(r for r in rows if r["step"] == 4)
    assert step4["min_insync_replicas"] == 3 and sorted(step4["isr_after"]) == [1, 5]
    printed = capsys.readouterr().out
    assert "verdict: NOT SAFE: 1 partition(s) taken offline by step(s) [1]" in printed


def test_plan_without_rack_a_twice_is_safe(tmp_path: Path) -> None:
    """Failing broker 6 alone leaves every partition a live ISR member and 2 in-sync
    replicas where it had 3 (orders-1): exit 0, no row."""
    state = zookeeper_tables(tmp_path / "tables")
    plan = tmp_path / "safe.toml"
    plan.write_text('[settings]\nmin_insync_replicas = 2\n[[step]]\naction = "fail"\n'
                    "brokers = [6]\n")
    assert main(["--from-state", str(state), "--plan", str(plan), "--out",
                 str(tmp_path / "plan")]) == 0
    assert pq.read_table(tmp_path / "plan" / "plan_check" / "run_id=safe").num_rows == 0


def test_bad_plan_is_one_line_exit_2(tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    state = zookeeper_tables(tmp_path / "tables")
    plan = tmp_path / "bad.toml"
    for text, says in [
        ('[[step]]\naction = "explode"\nbrokers = [1]\n', "action must be one of"),
        ('[[step]]\naction = "fail"\nrack = "z"\n', "has no broker"),
        ('[[step]]\naction = "fail"\nbrokers = [99]\n', "is not in the state"),
        ("[[step]\n", "not TOML"),
        ("", "no [[step]]"),
    ]:
        plan.write_text(text)
        assert main(["--from-state", str(state), "--plan", str(plan)]) == 2, text
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(err) == 1 and says in err[0], (text, err)
    dump = tmp_path / "describe.txt"
    dump.write_text("Topic: t\tPartition: zero\tLeader: 1\n")
    plan.write_text('[[step]]\naction = "fail"\nbrokers = [1]\n')
    assert main(["--from-state", str(dump), "--plan", str(plan)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "--from-state" in err[0] and "describe.txt:1" in err[0], err
    whatif_out = zookeeper_tables(tmp_path / "whatif")
    part = whatif_out / "partition_states" / "run_id=night-1" / "part-0.parquet"
    table = pq.read_table(part)
    pq.write_table(table.append_column("variant", pa.array(["baseline"] * table.num_rows)),
                   part)
    assert main(["--from-state", str(whatif_out), "--plan", str(plan)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "a what-if output" in err[0], err
    kraft = kraft_tables(tmp_path / "kraft")
    plan.write_text('[racks]\n7 = "d"\n[[step]]\naction = "reassign"\ntopic = "clicks"\n'
                    "partition = 0\nreplicas = [3, 7]\n")
    assert main(["--from-state", str(kraft), "--plan", str(plan)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "broker 7 is not registered in the KRaft state" in err[0], err


ROLLING = ('[[step]]\naction = "shutdown"\nbrokers = [1]\n'
           '[[step]]\naction = "shutdown"\nbrokers = [2]\n'
           '[[step]]\naction = "restart"\nbrokers = [1]\n')


@pytest.mark.parametrize(("tables", "advice"), [
    (zookeeper_tables, "move step 3 (restart broker 1) before step 2 (shutdown broker 2): "
                       "keeps clicks-0 online; that plan takes 0 partition(s) offline"),
    (kraft_tables, "move step 3 (restart broker 1) before step 2"),
], ids=["zookeeper", "kraft"])
def test_a_rolling_restart_out_of_order_gets_a_reorder(
        tmp_path: Path, tables: Callable[[Path], Path], advice: str) -> None:
    """Shut down broker 1, shut down broker 2, restart broker 1: clicks-0 ([1, 2]) keeps
    broker 2 after step 1 and nothing after step 2: offline at step 2. Restarting broker 1
    before step 2 gives it back a replica in its ISR ([2, 1]), and `doControlledShutdown`
    of broker 2 then moves the leadership to 1: the advice is that reorder. On the KRaft
    image the same reorder saves clicks-0 (broker 1 unfenced and caught up before broker 2
    shuts down)."""
    state = tables(tmp_path / "tables")
    plan = tmp_path / "rolling.toml"
    plan.write_text(ROLLING)
    assert main(["--from-state", str(state), "--plan", str(plan), "--out",
                 str(tmp_path / "plan")]) == 1
    rows = pq.read_table(tmp_path / "plan" / "plan_check" / "run_id=rolling").to_pylist()
    offline = [r for r in rows if r["finding"] == OFFLINE]
    assert [(r["step"], r["topic"], r["partition"]) for r in offline] == [(2, "clicks", 0)]
    assert offline[0]["advice_kind"] == REORDER
    assert str(offline[0]["advice"]).startswith(advice)


def test_kraft_tables_hand_derived(tmp_path: Path, plan_file: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The same plan on the KRaft image: `handleBrokerInControlledShutdown` takes broker 1
    out of clicks-0's ISR and leadership (2 leads), then broker 2's takes the last one:
    offline at step 1, and the same under-min-ISR rows as in ZooKeeper mode (the ISR shrink
    and election from the live ISR are the same rule: `PartitionChangeBuilder`). Restarting
    rack a gives clicks-0 its last ISR member back (`handleBrokerUnfenced` elects it), so
    nothing new goes wrong at step 3. No reorder saves clicks-0; the replica move is the
    ZooKeeper test's, by 3.7.0 `ReplicationControlManager.changePartitionReassignment`:
    [1, 2] -> [4, 2] is replicas [4, 2, 1], adding [4], removing [1], leader 1 kept; the
    leader's AlterPartition with 4 caught up ([1, 2, 4]) completes it
    (`maybeCompleteReassignment`): ISR [2, 4], replicas [4, 2], and the leader 1, being
    removed, hands over to 4, the first target replica in the ISR. Shutting rack a down
    then leaves clicks-0 led by 4: under min ISR, not offline. clicks-1 [3, 5] -> [4, 5]
    the same way keeps [5, 4] when 3 fails."""
    state = kraft_tables(tmp_path / "tables")
    code = main(["--from-state", str(state), "--plan", str(plan_file),
                 "--out", str(tmp_path / "plan")])
    assert code == 1
    rows = _rows(tmp_path / "plan")
    assert {r["mode"] for r in rows} == {"kraft"}
    found = {(r["step"], r["topic"], r["partition"], r["finding"]) for r in rows}
    assert found == {(1, "clicks", 0, OFFLINE), (1, "clicks", 2, UNDER_MIN_ISR),
                     (2, "orders", 0, UNDER_MIN_ISR), (2, "clicks", 1, UNDER_MIN_ISR),
                     (4, "orders", 0, UNDER_MIN_ISR)}
    first = rows[0]
    assert (first["topic"], first["partition"], first["leader_after"]) == ("clicks", 0, -1)
    assert first["advice_kind"] == REASSIGN_FIRST
    assert "to [4, 2]" in str(first["advice"]) and "broker 4 (rack b)" in str(first["advice"])
    clicks1 = next(r for r in rows if (r["topic"], r["partition"]) == ("clicks", 1))
    assert clicks1["isr_after"] == [5] and "to [4, 5]" in str(clicks1["advice"])
    assert "kraft tables" in capsys.readouterr().out


def describe_dump(path: Path) -> Path:
    """The same cluster as `kafka-topics --describe` prints it (2.4+), its min ISR in the
    topics' Configs instead of the plan's [settings]."""
    lines = []
    for topic in ("clicks", "orders"):
        parts = [p for p in PARTS if p[0] == topic]
        lines.append(f"Topic: {topic}\tPartitionCount: {len(parts)}\tReplicationFactor: "
                     f"{len(parts[0][3])}\tConfigs: min.insync.replicas=2")
        lines += [f"\tTopic: {t}\tPartition: {p}\tLeader: {leader}\tReplicas: "
                  f"{','.join(map(str, rs))}\tIsr: {','.join(map(str, rs))}"
                  for t, p, leader, rs in parts]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_describe_dump_as_the_state(tmp_path: Path, plan_file: Path) -> None:
    """`--from-state describe.txt`: every broker leads or is in an ISR, so all six are live;
    min ISR 2 comes from the topics' Configs (the plan's [settings] is taken out): the
    hand-derived rows of the tables' test."""
    plan_file.write_text(PLAN.replace("[settings]\nmin_insync_replicas = 2\n", ""))
    dump = describe_dump(tmp_path / "describe.txt")
    assert main(["--from-state", str(dump), "--plan", str(plan_file), "--out",
                 str(tmp_path / "plan")]) == 1
    rows = _rows(tmp_path / "plan")
    assert {(r["step"], r["topic"], r["partition"], r["finding"]) for r in rows} == {
        (1, "clicks", 0, OFFLINE), (1, "clicks", 2, UNDER_MIN_ISR),
        (2, "orders", 0, UNDER_MIN_ISR), (2, "clicks", 1, UNDER_MIN_ISR),
        (4, "orders", 0, UNDER_MIN_ISR)}
    assert {r["state_run_id"] for r in rows} == {"describe.txt"}


def test_help_shows_the_worked_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--from-state", "x", "--plan", "y", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for expected in ("--from-state OUT_DIR", "--plan PLAN", "[[step]]", 'rack = "a"',
                     "reassign", "Exit code 1 when a step takes a partition offline"):
        assert expected in text, expected
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--from-state OUT_DIR --plan PLAN.toml" in capsys.readouterr().out


@pytest.mark.parametrize("tables", [zookeeper_tables, kraft_tables], ids=["zookeeper", "kraft"])
def test_a_planned_reassignment_keeps_clicks_0_online(
        tmp_path: Path, tables: Callable[[Path], Path]) -> None:
    """Step 1 reassigns clicks-0 from [1, 2] to [1, 4] (`onPartitionReassignment`; the plan
    waits until 4 caught up, which completes it and drops 2); shutting rack a down at step
    2 then moves its leadership to 4 (`doControlledShutdown`): no longer offline, only under
    min ISR with ISR [4], like clicks-2. No partition offline: exit 0.

    On the KRaft image (3.7.0 `ReplicationControlManager.java`): `changePartitionReassignment`
    writes replicas [1, 4, 2], adding [4], removing [2] (leader 1 kept); leader 1's
    AlterPartition with 4 caught up completes it: ISR [1, 4], replicas [1, 4], the leader
    epoch bumped. `handleBrokerInControlledShutdown` of 1 then moves the leadership to 4,
    the ISR [4]: the same rows."""
    state = tables(tmp_path / "tables")
    plan = tmp_path / "moved.toml"
    plan.write_text(PLAN.split("[[step]]")[0] + '[[step]]\naction = "reassign"\n'
                    'topic = "clicks"\npartition = 0\nreplicas = [1, 4]\n'
                    '[[step]]\naction = "shutdown"\nrack = "a"\n')
    assert main(["--from-state", str(state), "--plan", str(plan), "--out",
                 str(tmp_path / "plan")]) == 0
    rows = pq.read_table(tmp_path / "plan" / "plan_check" / "run_id=moved").to_pylist()
    assert {(r["step"], r["topic"], r["partition"], r["finding"]) for r in rows} == {
        (2, "clicks", 0, UNDER_MIN_ISR), (2, "clicks", 2, UNDER_MIN_ISR)}
    clicks0 = next(r for r in rows if r["partition"] == 0)
    assert (clicks0["replicas"], clicks0["leader_after"], clicks0["isr_after"]) == (
        [1, 4], 4, [4])
