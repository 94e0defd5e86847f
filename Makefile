# Kafka controller replay. `make help` lists the targets.
SHELL := /bin/bash
PY := .venv/bin/python
PIP := .venv/bin/pip
STAMP := .venv/.installed
COMPILED := .venv/.core-compiled
CORE_SOURCES := $(filter-out statemachine/__init__.py,$(wildcard statemachine/*.py))
SO := .cpython-*.so
OUT ?= out
BENCH ?= bench
KRAFT_SIZE ?= bench
DIST ?= dist

.DEFAULT_GOAL := help

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

# A fresh machine gets its .venv here, before the first target that needs it.
$(STAMP): pyproject.toml
	python3 -m venv .venv
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP) $(COMPILED) ## create .venv/ with everything the jobs and tests need

# The core compiled with mypyc (mypy's compiler, in the dev extra): the extension modules sit
# next to statemachine/*.py, the runtime they share at the top. Without a C compiler, or if
# the compile fails, the sources run as they are (statemachine/__init__.py also ignores a
# build older than its sources, hence the touch: a rebuild copies unchanged module stubs with
# their old times). __init__.py stays interpreted: it picks the modules.
$(COMPILED): $(STAMP) $(CORE_SOURCES)
	@rm -f statemachine/*$(SO) *__mypyc*$(SO)
	@if command -v cc >/dev/null 2>&1 && \
	  (start=$$(date +%s); .venv/bin/mypyc $(CORE_SOURCES) >build-core.log 2>&1 && \
	   echo "[install] statemachine/ compiled with mypyc in $$(( $$(date +%s) - start )) s"); \
	then touch statemachine/*$(SO) *__mypyc*$(SO) $(COMPILED); \
	else rm -f statemachine/*$(SO) *__mypyc*$(SO); \
	  echo "[install] no C compiler or the compile failed (build-core.log): statemachine/ runs interpreted"; fi

compile-core: $(COMPILED) ## compile statemachine/ with mypyc (make install does; falls back to the sources)

uncompile-core: ## remove the compiled core: statemachine/ runs from its sources
	rm -f statemachine/*$(SO) *__mypyc*$(SO) $(COMPILED)

run: install ## replay a generated sample log locally and print a summary
	$(PY) -m jobs.sample --out $(OUT)

audit-sample: install ## audit the sample run of `make run` again (exit 1 on a critical check)
	$(PY) -m jobs.audit --tables $(OUT)/tables --run-id sample --fail-on critical

ingest-sample: install ## ingest sample Kafka logs, replay them, compare with what Kafka logged
	$(PY) -m jobs.ingest --logs tests/fixtures/ingest/versions/ak2.2 --out $(OUT)/ingest
	$(PY) -m jobs.replay --events $(OUT)/ingest/events --out $(OUT)/ingest-replay
	$(PY) -m jobs.compare --observed $(OUT)/ingest --replayed $(OUT)/ingest-replay --out $(OUT)/ingest-compare

kraft-sample: install ## simulate a KRaft metadata log, ingest, replay, audit and report it under $(OUT)/kraft
	$(PY) -m jobs.sample.kraft --out $(OUT)/kraft

report-sample: install ## write $(OUT)/report.html for the sample (replays it first if $(OUT)/tables is missing)
	@test -d $(OUT)/tables/run_summary || $(PY) -m jobs.sample --out $(OUT)
	$(PY) -m jobs.report --tables $(OUT)/tables --out $(OUT)/report.html

# The report's tests open the page in a real headless browser: Debian's chromium (as root,
# as CI runs on a fresh Debian machine).
browser: ## install Debian's chromium if it is missing (the report tests render in it)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y --no-install-recommends chromium)

# The audit's textfile is scraped by a real node_exporter: Debian's prometheus-node-exporter
# (its package does not start the service where policy-rc.d or no systemd forbids it; the
# test starts its own on a loopback port with only the textfile collector).
node-exporter: ## install Debian's prometheus-node-exporter if it is missing (the textfile test scrapes it)
	command -v prometheus-node-exporter >/dev/null || (apt-get update && apt-get install -y --no-install-recommends prometheus-node-exporter)

# Test files are spread over TEST_WORKERS processes, each file whole on one (its module
# fixtures, the shared replays, are built once), each process with its own SparkSession.
TEST_WORKERS ?= 2
XDIST = -n $(TEST_WORKERS) --dist loadfile

test: install browser node-exporter ## run every test CI runs (pure core, Spark, end to end, standalone cluster)
	$(PY) -m pytest -q $(XDIST) --durations=20

test-fast: install ## the inner loop: every test but the slow end-to-end and cluster ones
	$(PY) -m pytest -q $(XDIST) -m "not slow and not cluster"

test-core: install ## the pure tests: no JVM, no Spark
	$(PY) -m pytest -q -m "not spark and not cluster"

test-interpreted: install ## the core's tests again on the interpreted modules (make test runs the compiled ones)
	STATEMACHINE_INTERPRETED=1 $(PY) -m pytest -q tests/statemachine

lint: install ## ruff over the whole project, and the import contracts (pyproject.toml)
	.venv/bin/ruff check .
	.venv/bin/lint-imports --no-cache

typecheck: install ## mypy --strict on the core, the contracts and the jobs
	.venv/bin/mypy --strict statemachine schemas jobs

# Every bench writes its figures under out/bench/ (bench.json, BENCHMARKS.md: copies of the
# tracked files, updated); `make bench-record` puts them in the tree, on purpose.
bench-core: install ## events per second of the pure core (no Spark), into out/bench/bench.json
	$(PY) -m jobs.bench.core --preset $(BENCH) --record out/bench/bench.json

bench: install ## Spark job vs pure core on a simulated log; figures into out/bench/
	$(PY) -m jobs.bench --preset $(BENCH)

bench-record: ## copy out/bench/bench.json and BENCHMARKS.md over the tracked ones (deliberately)
	cp out/bench/bench.json bench.json
	cp out/bench/BENCHMARKS.md BENCHMARKS.md

whatif-sample: install ## fail each broker of the sample log in turn (one Spark job), rank them, write the report
	@test -d $(OUT)/tables/run_summary || $(PY) -m jobs.sample --out $(OUT)
	$(PY) -m jobs.whatif --events $(OUT)/events --scenario conf/scenarios/sample-sweep.toml \
		--baseline $(OUT)/tables --run-id sample --out $(OUT)/whatif
	$(PY) -m jobs.report --tables $(OUT)/tables --run-id sample --audit $(OUT)/tables \
		--whatif $(OUT)/whatif --out $(OUT)/whatif-report.html

bench-nightly: install ## first run over 99% of the bench log with a checkpoint, then a night over the last 1%; into out/bench/
	$(PY) -m jobs.bench.nightly --preset $(BENCH)

bench-month: install ## the bench log cut into 30 nights, replayed night after night on one checkpoint; into out/bench/
	$(PY) -m jobs.bench.month --preset $(BENCH)

bench-kraft: install ## KRaft replay job vs the single-process KRaft fold on a simulated history (KRAFT_SIZE=bench); into out/bench/
	$(PY) -m jobs.bench.kraft --size $(KRAFT_SIZE)

bench-whatif: install ## fail_each_broker sweep vs one plain replay of the bench log; into out/bench/
	$(PY) -m jobs.bench.whatif_sweep --preset $(BENCH)

bench-whatif-fold: install ## the same sweep's fold work against one replay's, CPU seconds, no Spark
	$(PY) -m jobs.bench.whatif_fold --preset $(BENCH)

# The code spark-submit ships (--py-files): only zipped, so the system python3 does it (no
# venv, no `zip` binary, which a fresh Debian lacks); bytecode caches and the compiled core
# stay out (a zip cannot hold extension modules: the workers run the sources).
define ZIP_SOURCES
import pathlib, sys, zipfile
target, *packages = sys.argv[1:]
with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
    for package in packages:
        for path in sorted(pathlib.Path(package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".so":
                z.write(path, path.as_posix())
print(target)
endef
export ZIP_SOURCES

package: ## build dist/replay.zip (or DIST=dir) for spark-submit --py-files; needs no venv
	mkdir -p $(DIST) && rm -f $(DIST)/replay.zip
	python3 -c "$$ZIP_SOURCES" $(DIST)/replay.zip jobs statemachine schemas

cluster-test: install ## spark-submit the replay to a standalone master + 2 workers on loopback
	$(PY) -m pytest -q -m cluster tests/e2e/test_cluster_submit.py

clean: ## remove build and run outputs (keeps .venv)
	rm -rf dist build build-core.log $(OUT) .pytest_cache .mypy_cache .ruff_cache

.PHONY: help install compile-core uncompile-core test-interpreted run kraft-sample report-sample browser test test-fast test-core lint typecheck bench-core bench bench-record bench-nightly bench-month package cluster-test clean ingest-sample audit-sample whatif-sample bench-whatif bench-whatif-fold bench-kraft node-exporter
