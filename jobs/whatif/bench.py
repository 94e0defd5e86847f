"""`python -m jobs.whatif.bench`: N variants in one what-if job against N separate replays.

The what-if runs a `fail_each_broker` sweep (one variant per broker, plus the baseline) over
one read of the log; the comparison replays the same log once per variant with
`jobs.replay`, as running each variant on its own would. Both share one SparkSession, so
the JVM start is in neither figure.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.common.session import build_session
from jobs.replay.job import main as replay_main
from jobs.sim.cli import write_log
from jobs.whatif.facts import facts_from_arrow
from jobs.whatif.job import main as whatif_main


def sweep_scenario(events: str, path: Path) -> int:
    """A fail_each_broker sweep halfway through the log; returns the variants it makes
    (one per broker, plus the baseline)."""
    facts = facts_from_arrow(events)
    assert facts is not None and facts.clusters
    cluster = next(iter(facts.clusters.values()))
    middle = int((int(cluster.times.min()) + int(cluster.times.max())) // 2)
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(middle / 1e6))
    path.write_text(f'[sweep]\nfail_each_broker = {{ at = "{at}" }}\n')
    return len(facts.all_brokers) + 1


def measure(spark: SparkSession, preset: str, buckets: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-whatif-") as tmp:
        root = Path(tmp)
        write_log(str(root / "log"), preset=preset, seed=1)
        variants = sweep_scenario(str(root / "log"), root / "sweep.toml")
        started = time.perf_counter()
        assert whatif_main(["--events", str(root / "log"), "--scenario",
                            str(root / "sweep.toml"), "--out", str(root / "whatif"),
                            "--buckets", str(buckets)], spark=spark) == 0
        one_job = time.perf_counter() - started
        started = time.perf_counter()
        for i in range(variants):
            assert replay_main(["--events", str(root / "log"), "--out", str(root / "replay"),
                                "--run-id", f"r{i}", "--buckets", str(buckets)],
                               spark=spark) == 0
        separate = time.perf_counter() - started
    return {"variants": variants, "one_job_seconds": one_job,
            "separate_replays_seconds": separate, "ratio": separate / one_job}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="jobs.whatif.bench", description=__doc__.split("\n")[0])
    p.add_argument("--preset", default="sample")
    p.add_argument("--buckets", type=int, default=8)
    p.add_argument("--master", default="local[*]")
    args = p.parse_args(argv)
    spark = build_session("bench-whatif", master=args.master)
    try:
        result = measure(spark, args.preset, args.buckets)
    finally:
        spark.stop()
    print(f"\n{result['variants']:.0f} variants ({args.preset}, buckets={args.buckets}): "
          f"one what-if job {result['one_job_seconds']:.1f} s, "
          f"{result['variants']:.0f} separate replays {result['separate_replays_seconds']:.1f} s"
          f" -> {result['ratio']:.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
