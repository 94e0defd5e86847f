"""Every command's `--help` (pure: each parser only, no Spark): a description of whole
sentences, every default shown, the shared exit codes, and for jobs.sim each preset's size."""

from __future__ import annotations

import argparse
import importlib
import re
from typing import Any

import pytest

from jobs.common.cli import has_default
from jobs.common.exitcodes import exit_codes_help
from jobs.sim.presets import PRESETS

COMMANDS = {
    "replay": "jobs.replay.job", "audit": "jobs.audit.job", "whatif": "jobs.whatif.job",
    "report": "jobs.report.job", "sim": "jobs.sim.cli", "ingest": "jobs.ingest.job",
    "compare": "jobs.compare.job", "sample": "jobs.sample.job", "bench": "jobs.bench.job",
    "dataloss": "jobs.dataloss.job",
}


def run_help(module: str, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> tuple[argparse.ArgumentParser, str]:
    """`main(["--help"])` of the command: the parser it built and what it printed (one
    line per option: COLUMNS is wide, so no value is wrapped)."""
    monkeypatch.setenv("COLUMNS", "1000")
    parsers: list[argparse.ArgumentParser] = []
    parse = argparse.ArgumentParser.parse_args

    def recording(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        parsers.append(self)
        return parse(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", recording)
    with pytest.raises(SystemExit) as stop:
        importlib.import_module(module).main(["--help"])
    assert stop.value.code == 0
    return parsers[0], capsys.readouterr().out


def option_texts(out: str) -> dict[str, str]:
    """Each option's entry in the help (its invocation and help, one string), by name."""
    section = out.split("\noptions:\n", 1)[1].split("\n\n", 1)[0]
    entries = re.split(r"\n(?=  -)", section)
    return {entry.split()[0].rstrip(","): " ".join(entry.split()) for entry in entries}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_is_complete(command: str, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    parser, out = run_help(COMMANDS[command], monkeypatch, capsys)
    description = (parser.description or "").split("\n\n")[0]
    assert description[:1].isupper() and description.endswith("."), description
    assert description in out  # printed with its line breaks, not cut
    # The codes it can exit with, and only those: 1 with --fail-on, 75 with --checkpoint.
    options = {name for action in parser._actions for name in action.option_strings}
    extra = tuple(code for code, flag in ((1, "--fail-on"), (75, "--checkpoint"))
                  if flag in options)
    assert out.rstrip().endswith(exit_codes_help(*extra))
    codes = re.findall(r"^  (\d+) ", out.split("exit codes", 1)[1], re.MULTILINE)
    assert codes == sorted(["0", "2", "3", "130", "143", *map(str, extra)], key=int)
    shown = option_texts(out)
    for action in parser._actions:
        if action.dest == "help":
            continue
        name = action.option_strings[0]
        assert action.help, f"{command} {name} has no help"
        if has_default(action):
            assert "default" in shown[name] and str(action.default) in shown[name], shown[name]


def test_sim_help_gives_each_presets_size(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run_help(COMMANDS["sim"], monkeypatch, capsys)
    for preset in PRESETS.values():
        line = next(li for li in out.splitlines() if li.split()[:1] == [preset.name])
        for size in (f"{preset.brokers} brokers", f"{preset.partitions:,} partitions",
                     f"{preset.events:,} events", "topics of 1 to "):
            assert size in line, (size, line)
