"""``casebook SUBCOMMAND …``: the entry point of the ``casebook`` console script."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from scoring.cli import submit
from scoring.runfiles import command as score_command

EXIT_INVALID = score_command.EXIT_INVALID


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="casebook",
        description="Score recorded agent runs offline, or submit them to a Casebook server.",
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    score = commands.add_parser(
        "score",
        help="score a run file against a suite file, offline (as manage.py score)",
        description="Score a run file against a suite file, offline.",
    )
    score_command.add_arguments(score, _settings())
    score.set_defaults(handler=_score)
    sending = commands.add_parser(
        "submit",
        help="send a run file to a Casebook server, wait for its scoring, gate on it",
        description="Send a run file to a Casebook server and gate a CI build on the answer.",
    )
    submit.add_arguments(sending)
    sending.set_defaults(handler=_submit)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    status: int = args.handler(args)
    return status


def _score(args: argparse.Namespace) -> int:
    return score_command.run(vars(args), _settings(), sys.stdout, sys.stderr)


def _submit(args: argparse.Namespace) -> int:
    return submit.run(args, sys.stdout, sys.stderr)


def _settings() -> score_command.OfflineSettings:
    try:
        return score_command.OfflineSettings.from_environment(os.environ)
    except ValueError as exc:
        sys.stderr.write(f"casebook: {exc}\n")
        raise SystemExit(EXIT_INVALID) from None
