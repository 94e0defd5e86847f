"""The one shape of every command's `--help`.

The description is the first paragraph of the command module's docstring (whole sentences,
line breaks kept as written), every option with a default shows it, every command takes
`--quiet` and `--verbose` (read by `jobs.common.command.run_job`), and the epilog lists the
exit codes the command can exit with (`jobs.common.exitcodes.exit_codes_help`: 1 only for a
command with --fail-on, 75 only for one with a checkpoint), line breaks kept.
"""

from __future__ import annotations

import argparse
from typing import Any

from jobs.common.exitcodes import exit_codes_help


def first_paragraph(doc: str | None) -> str:
    """A module docstring's first paragraph: the command's description."""
    return (doc or "").strip().split("\n\n", 1)[0].strip()


def has_default(action: argparse.Action) -> bool:
    """True when the option has a default worth showing: not None, not a flag's False, not
    an empty list, not argparse's SUPPRESS (`--help`)."""
    default: Any = action.default
    if not action.option_strings or default is None or default is False:
        return False
    if default is argparse.SUPPRESS:
        return False
    return not (isinstance(default, (list, tuple)) and not default)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's and the epilog's line breaks; an option whose help does not
    already name its default gets `(default: X)`."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if has_default(action) and "default" not in text:
            text = f"{text} (default: %(default)s)".lstrip()
        return text


def command_parser(prog: str, doc: str | None, more: str = "",
                   codes: tuple[int, ...] = ()) -> argparse.ArgumentParser:
    """The parser of a command: `doc`'s first paragraph (then `more`, when given) as the
    description, the exit codes it can exit with as the epilog: every command's (0, 2, 3,
    130, 143) and `codes` (1 for a command with --fail-on, 75 for one with a checkpoint)."""
    description = first_paragraph(doc)
    if more:
        description = f"{description}\n\n{more.strip()}"
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     epilog=exit_codes_help(*codes),
                                     formatter_class=HelpFormatter)
    talk = parser.add_mutually_exclusive_group()
    talk.add_argument("--quiet", action="store_true",
                      help="only warnings, errors and the command's results")
    talk.add_argument("--verbose", action="store_true", help="debug lines as well")
    return parser
