"""Check a maintenance plan against the latest state of a replay's output, before anyone
acts: which partitions each step would take offline or under min ISR, and which step to
reorder or which replica to move first to avoid it. No history is replayed and no Spark
runs: the state tables are read with pyarrow and the plan drives the pure core.

    .venv/bin/python -m jobs.whatif --from-state out/tables --plan plans/rack-a.toml \\
        [--out out/plan] [--run-id ID] [--state-run-id RUN] [--cluster NAME]
    .venv/bin/python -m jobs.whatif --from-state describe.txt --plan plans/rack-a.toml

Exit code 1 when a step takes a partition offline, 0 otherwise (under min ISR is printed
and listed, not a failure), 2 for a bad plan or state. A worked example of a plan file:

    [racks]                     # broker = "rack" (broker.rack)
    1 = "a"
    2 = "a"
    3 = "b"
    4 = "b"

    [settings]                  # what the controller reads; Kafka's defaults otherwise
    min_insync_replicas = 2

    [[step]]
    name = "patch rack a"
    action = "shutdown"         # fail | shutdown | restart | reassign | config
    rack = "a"                  # or brokers = [1, 2]

    [[step]]
    action = "fail"
    brokers = [3]

    [[step]]
    action = "restart"
    rack = "a"

    [[step]]
    action = "reassign"
    topic = "orders"
    partition = 0
    replicas = [2, 3, 4]

    [[step]]
    action = "config"
    topic = "orders"            # none: the cluster default
    unclean_leader_election_enable = true
"""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import replace
from pathlib import Path

from jobs.common.cli import command_parser
from jobs.common.exitcodes import CHECK_FAILED, OK
from jobs.store.filesystem import run_id_problem
from jobs.whatif.plan_check import kraft, zookeeper
from jobs.whatif.plan_check.check import Runner, check_plan
from jobs.whatif.plan_check.dump import read_dump_state
from jobs.whatif.plan_check.plan_file import CONFIG, REASSIGN, Plan, PlanError, load_plan
from jobs.whatif.plan_check.printed import plan_check_text
from jobs.whatif.plan_check.state import KRAFT, StartState, read_start_state
from jobs.whatif.plan_check.table import write_table

log = logging.getLogger(__name__)
FLAG = "--from-state"


def requested(argv: list[str]) -> bool:
    """Whether a `jobs.whatif` command line asks for a plan check."""
    return any(a == FLAG or a.startswith(FLAG + "=") for a in argv)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = command_parser("jobs.whatif", __doc__,
                       more=(__doc__ or "").split("\n\n", 1)[1], codes=(CHECK_FAILED,))
    p.add_argument(FLAG, required=True, metavar="OUT_DIR",
                   help="a jobs.replay --out directory (ZooKeeper-mode or KRaft tables), or "
                   "a kafka-topics --describe output file (or a ZooKeeper partition-state "
                   "dump): its leaders and ISR members are the live brokers")
    p.add_argument("--plan", required=True, help="the plan TOML ([racks], [settings], "
                   "[[step]])")
    p.add_argument("--out", help="write the plan_check table under this directory")
    p.add_argument("--run-id", help="the plan check's run id in plan_check (default: the "
                   "plan file's stem)")
    p.add_argument("--state-run-id", help="the replay run whose state the plan starts from "
                   "(default: the latest run)")
    p.add_argument("--cluster", help="the cluster of the state (default: the only one)")
    return p.parse_args(argv)


def checked_against(plan: Plan, state: StartState) -> None:
    """What the plan names must exist in the state; PlanError (one line) otherwise."""
    brokers = state.known_brokers() | frozenset(plan.racks)
    parts = {(p.topic, p.partition) for p in state.partitions}
    topics = {t for t, _ in parts}
    for s in plan.steps:
        where = f"--plan {plan.path}: step {s.number}"
        unknown = [b for b in (*s.brokers, *s.replicas) if b not in brokers]
        if unknown:
            raise PlanError(f"{where}: broker {unknown[0]} is not in the state of run "
                            f"{state.run_id} (brokers: {sorted(brokers)})")
        if s.action == REASSIGN and (s.topic, s.partition) not in parts:
            raise PlanError(f"{where}: partition {s.topic}-{s.partition} is not in the state")
        unregistered = [b for b in s.replicas if b not in state.known_brokers()]
        if s.action == REASSIGN and state.mode == KRAFT and unregistered:
            # `validateManualPartitionAssignment`: every target replica a registered broker.
            raise PlanError(f"{where}: broker {unregistered[0]} is not registered in the "
                            f"KRaft state of run {state.run_id}: a KRaft controller refuses "
                            "a reassignment onto it")
        if s.action == CONFIG and s.topic and s.topic not in topics:
            raise PlanError(f"{where}: topic {s.topic} is not in the state")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    plan = load_plan(args.plan)
    run_id = args.run_id or Path(args.plan).stem
    problem = run_id_problem(run_id)
    if problem is not None:
        raise PlanError(problem)
    started = time.perf_counter()
    state = (read_dump_state(args.from_state) if Path(args.from_state).is_file()
             else read_start_state(args.from_state, args.state_run_id, args.cluster))
    plan = replace(plan, settings=plan.settings.under(state.topic_min_isr, state.topic_unclean))
    checked_against(plan, state)
    log.info(f"state: run {state.run_id}, {len(state.partitions)} partitions, "
             f"{state.mode} tables, read in {time.perf_counter() - started:.1f}s")
    runner: Runner = kraft.run_steps if state.mode == KRAFT else zookeeper.run_steps
    result = check_plan(state, plan, runner)
    log.info(f"check: {result.plans_run} plan run(s) in {time.perf_counter() - started:.1f}s")
    print(plan_check_text(result), flush=True)
    if args.out:
        where = write_table(result, args.out, run_id)
        log.info(f"plan_check: {len(result.findings)} row(s) in {where}")
    return CHECK_FAILED if result.takes_offline else OK
