"""Write a large synthetic controller/state-change log for measuring the ingest.

    .venv/bin/python -m jobs.bench.synthetic_log --out /tmp/synth/kafka.log --size-mb 1024

Every line is a copy of a real line format: the lines of the real logs and the version
fixtures under tests/fixtures/ingest (all envelopes, 0.10 to 3.7 formats, broker-side
lines, stack traces, ignored server.log lines). Copy k gets its own topics (`<topic>-c<k>`)
and a timestamp k seconds after the previous copy, so topics and partitions vary and the
merged order is the file order. Not part of the tests: a measurement, taken by hand (its
figures are in the log of BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from jobs.ingest.logparse import pipeline

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ingest"
_TS = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}")


def templates() -> list[str]:
    """Fixture lines as format strings: `{ts}` for the timestamp, `{c}` after each topic."""
    files = [p for p in sorted(FIXTURES.rglob("*")) if p.is_file() and not p.name.endswith(
        ".gz") and pipeline.wanted(p.name)]
    result = pipeline.ingest([str(p) for p in files])
    topics = sorted({o.topic for o in result.observations if o.topic}
                    | {e.topic for e in result.events if e.topic}, key=len, reverse=True)
    topic_rx = re.compile("|".join(re.escape(t) for t in topics))
    out: list[str] = []
    for p in files:
        for line in p.read_text(encoding="utf-8").splitlines():
            if not line or line.startswith("#"):
                continue
            line = line.replace("{", "{{").replace("}", "}}")
            line = topic_rx.sub(lambda m: m.group(0) + "-c{c}", line)
            out.append(_TS.sub("{ts}", line))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="jobs.bench.synthetic_log")
    ap.add_argument("--out", required=True, help="file to write")
    ap.add_argument("--size-mb", type=int, default=1024, help="approximate size (MiB)")
    args = ap.parse_args(argv)
    tpl = templates()
    target = args.size_mb * 1024 * 1024
    start = datetime(2024, 1, 1)
    t0 = time.time()
    written = lines = copies = 0
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        while written < target:
            ts = (start + timedelta(seconds=copies)).strftime("%Y-%m-%d %H:%M:%S,000")
            chunk = "\n".join(t.format(ts=ts, c=copies) for t in tpl) + "\n"
            fh.write(chunk)
            written += len(chunk.encode("utf-8"))
            lines += len(tpl)
            copies += 1
    print(f"{args.out}: {written / 1e6:.0f} MB, {lines} lines ({copies} copies of "
          f"{len(tpl)} line formats) in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
