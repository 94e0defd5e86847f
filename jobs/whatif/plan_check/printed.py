"""The printed plan check: a verdict line, then each step (worst first) with the
partitions it hurts, ranked, and the advice under each."""

from __future__ import annotations

from jobs.whatif.plan_check.check import MAX_REASSIGN_ADVICE, OFFLINE, Finding, PlanCheck

LISTED = 20  # partitions printed per step (the table holds them all)


def _line(f: Finding) -> str:
    what = ("OFFLINE" if f.kind == OFFLINE
            else f"UNDER MIN ISR ({len(f.after.isr)} < {f.min_isr})")
    return (f"  {what:<22} {f.topic}-{f.partition}  replicas {list(f.before.replicas)}  "
            f"isr {list(f.before.isr)} -> {list(f.after.isr)}  "
            f"leader {f.before.leader} -> {f.after.leader}")


def _advice(f: Finding) -> str:
    if f.advice:
        return f.advice
    if not f.searched:
        return (f"no reorder found; replica moves are searched for the first "
                f"{MAX_REASSIGN_ADVICE} ranked partitions only")
    return "no single reorder or replica move found"


def plan_check_text(result: PlanCheck) -> str:
    s, plan = result.state, result.plan
    offline = [f for f in result.findings if f.kind == OFFLINE]
    under = [f for f in result.findings if f.kind != OFFLINE]
    lines = [f"plan check: {plan.path}, {len(plan.steps)} step(s), against run {s.run_id} "
             f"of {s.out_dir} (cluster {s.cluster}, {s.mode} tables, "
             f"{len(s.partitions)} partitions, live brokers {sorted(s.live)})"]
    if result.offline_before or result.under_min_isr_before:
        lines.append(f"before step 1: {len(result.offline_before)} partition(s) already "
                     f"offline, {len(result.under_min_isr_before)} under min ISR (not counted "
                     "against the plan)")
    by_step: dict[int, list[Finding]] = {}
    for f in result.findings:
        by_step.setdefault(f.step.number, []).append(f)
    for number, found in by_step.items():  # in rank order: the worst step first
        step = found[0].step
        n_off = sum(f.kind == OFFLINE for f in found)
        lines.append(f"step {number} \"{step.name}\" ({step.describe()}): {n_off} partition(s) "
                     f"offline, {len(found) - n_off} under min ISR")
        for f in found[:LISTED]:
            lines.append(_line(f))
            lines.append(f"      advice: {_advice(f)}")
        if len(found) > LISTED:
            lines.append(f"  ... and {len(found) - LISTED} more (the plan_check table lists all)")
    safe = [st for st in plan.steps if st.number not in by_step]
    if safe:
        lines.append("no partition offline or under min ISR: step(s) "
                     + ", ".join(str(st.number) for st in safe))
    verdict = ("NOT SAFE: " + f"{len({(f.topic, f.partition) for f in offline})} partition(s) "
               f"taken offline by step(s) {sorted({f.step.number for f in offline})}"
               if offline else "no step takes a partition offline")
    lines.append(f"verdict: {verdict}; {len(under)} under-min-ISR finding(s); "
                 f"{result.plans_run} plan run(s) through the core")
    return "\n".join(lines)
