"""Regenerates scala_orders.json: the orders the real Scala library gives for random
sequences of broker ids, against which tests/statemachine/test_scala_order.py checks
`statemachine.scala_order` without a JVM.

Needs Java 17 (the single-file source launcher runs ScalaOrders.java) and two jars:

* 2.13: the scala-library jar PySpark bundles (found in the installed pyspark's `jars/`).
* 2.12: a 2.12.x jar up to 2.12.12, e.g. the scala-library-2.12.10 of PySpark 3.0.3's source
  distribution (the Scala of Kafka 2.4 / 2.5's kafka_2.12 builds):
      pip download pyspark==3.0.3 --no-deps -d /tmp/ps
      tar xzf /tmp/ps/pyspark-3.0.3.tar.gz -C /tmp/ps \\
          pyspark-3.0.3/deps/jars/scala-library-2.12.10.jar

    python tests/statemachine/data/make_scala_orders.py \\
        --jar212 /tmp/ps/pyspark-3.0.3/deps/jars/scala-library-2.12.10.jar

The inputs come from a fixed seed, so a rerun with the same jars writes the same file.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "scala_orders.json"
SEED = 20241
# Id ranges of real clusters (small ids, ids in the hundreds or thousands, racks of ids).
RANGES = ((0, 15), (0, 100), (0, 2000), (1000, 1100), (0, 1_000_000))


def _inputs(n: int) -> list[list[int]]:
    rng = random.Random(SEED)
    cases = []
    for i in range(n):
        lo, hi = RANGES[i % len(RANGES)]
        size = rng.choice((1, 2, 2, 3, 3, 4, 4, 5, 6, 8, 12, 13, 20, 30))
        ids = [rng.randint(lo, hi) for _ in range(size)]
        # Repeats, as a groupBy key repeats once per partition of the broker.
        cases.append(ids + [rng.choice(ids) for _ in range(rng.randint(0, 3))])
    return cases


def _run(jar: Path, cases: list[list[int]]) -> list[dict[str, object]]:
    stdin = "".join(" ".join(map(str, c)) + "\n" for c in cases)
    out = subprocess.run(["java", "-cp", str(jar), str(HERE / "ScalaOrders.java")],
                         input=stdin, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        group_by, to_set, cls = line.split("|")
        rows.append({"group_by": [int(x) for x in group_by.split()],
                     "to_set": [int(x) for x in to_set.split()], "class": cls})
    return rows


def main() -> None:
    import pyspark

    default213 = sorted((Path(pyspark.__file__).parent / "jars").glob("scala-library-2.13*.jar"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jar213", type=Path, default=default213[-1] if default213 else None)
    ap.add_argument("--jar212", type=Path, required=True)
    ap.add_argument("--cases", type=int, default=300)
    args = ap.parse_args()
    cases = _inputs(args.cases)
    jars = {"2.13": args.jar213, "2.12": args.jar212}
    results = {b: _run(jar, cases) for b, jar in jars.items()}
    doc = {
        "about": "orders from the real Scala library; regenerate with make_scala_orders.py",
        "jars": {b: jar.name for b, jar in jars.items()},
        "cases": [{"keys": c, **{b: results[b][i] for b in jars}} for i, c in enumerate(cases)],
    }
    OUT.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
