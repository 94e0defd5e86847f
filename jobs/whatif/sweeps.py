"""`[sweep]`: one variant per member (a broker, a rack, a pair of brokers) and time.

* `fail_each_broker`: the broker fails (`BrokerFailure`, its ZooKeeper session gone);
* `shutdown_each_broker`: the broker shuts down cleanly: a `ControlledShutdown` request
  (the controller moves its leaderships away, `KafkaController.doControlledShutdown`),
  then its exit (the `BrokerChange` that sees it gone, as when its process stops);
* `fail_each_rack`: every broker of one rack of `[racks]` (`broker.rack`) fails at once,
  one `BrokerChange` (a rack losing power or its switch);
* `fail_each_pair`: every pair of brokers fails at once: the worst case of replication
  factor 2, refused above `max_variants` variants (n brokers make n(n-1)/2 pairs).

With `for`, the members restart (`BrokerStartup`) that long after; with a list of times in
`at`, the sweep is made once per time, the time appended to the names.
"""

from __future__ import annotations

import time
from itertools import combinations

from jobs.whatif.facts import LogFacts
from jobs.whatif.scenario import Injection, ScenarioError, Sweep, VariantSpec
from schemas import event_types as ET

PREFIX = {"fail_each_broker": "fail-broker", "shutdown_each_broker": "shutdown-broker",
          "fail_each_rack": "fail-rack", "fail_each_pair": "fail-pair"}


def _members(sweep: Sweep, racks: tuple[tuple[int, str], ...],
             facts: LogFacts) -> list[tuple[str, tuple[int, ...]]]:
    """(member name, its brokers) in name order."""
    brokers = sorted(facts.all_brokers)
    if sweep.kind == "fail_each_rack":
        unknown = [b for b, _ in racks if b not in facts.all_brokers]
        if unknown:
            raise ScenarioError(f"[racks]: broker {unknown[0]} is never mentioned by the log")
        by_rack: dict[str, list[int]] = {}
        for broker, rack in racks:
            by_rack.setdefault(rack, []).append(broker)
        return [(rack, tuple(sorted(bs))) for rack, bs in sorted(by_rack.items())]
    if sweep.kind == "fail_each_pair":
        return [(f"{a}-{b}", (a, b)) for a, b in combinations(brokers, 2)]
    return [(str(b), (b,)) for b in brokers]


def _injections(sweep: Sweep, brokers: tuple[int, ...], at: int,
                facts: LogFacts) -> tuple[Injection, ...]:
    """The member's events in every cluster that knows each broker."""
    injections: list[Injection] = []
    for broker in brokers:
        for cluster, c in sorted(facts.clusters.items()):
            if broker not in c.brokers:
                continue
            fields = (("broker_id", broker), ("cluster", cluster))
            # The member's second and later brokers leave in the first one's BrokerChange.
            together = any(i.get("cluster") == cluster for i in injections)
            if sweep.kind == "shutdown_each_broker":
                injections.append(Injection(
                    (*fields, ("event_type", ET.CONTROLLED_SHUTDOWN)), at, None, None))
            injections.append(Injection((*fields, ("event_type", ET.BROKER_FAILURE)), at,
                                        None, None, sweep.restart_after, together))
    return tuple(injections)


def _time_suffix(at: int) -> str:
    return "-at-" + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(at / 1e6))


def sweep_variants(sweep: Sweep, racks: tuple[tuple[int, str], ...],
                   facts: LogFacts) -> list[VariantSpec]:
    """The variants of one sweep, named `<prefix>-<member>` (plus `-at-<time>` when `at`
    lists several times)."""
    members = _members(sweep, racks, facts)
    total = len(members) * len(sweep.at)
    if sweep.kind == "fail_each_pair" and total > sweep.max_variants:
        raise ScenarioError(f"[sweep] fail_each_pair makes {total} variants, more than "
                            f"max_variants = {sweep.max_variants}; raise it to run them")
    return [
        VariantSpec(f"{PREFIX[sweep.kind]}-{member}"
                    + (_time_suffix(at) if len(sweep.at) > 1 else ""),
                    injections=_injections(sweep, brokers, at, facts))
        for at in sweep.at for member, brokers in members
    ]
