"""``score SUITE_FILE RUN_FILE [--json] [--junit FILE] [--format NAME] [--case-field PATH]
[--jobs N] [--prices FILE]``: ``manage.py score`` and ``casebook score`` alike
(docs/command-line.md#score).

Scores offline, with no database, broker or server, streaming: a run line is parsed, scored
and written before the file is read much further (on ``--jobs`` processes, a few batches of
lines ahead; ``parallel``). Exit status: 0 all pass, 1 some fail or error, 2 invalid input
(the valid lines are still scored and reported). A file that gives no valid run ends with
one message saying what it looks like and what to change (``diagnosis``).

The limits' defaults come from a settings object: Django's for ``manage.py score``,
``OfflineSettings`` (the same ``CASEBOOK_*`` environment variables, the same defaults) for
``casebook score``.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from scoring.environments import EnvironmentLimits
from scoring.importers import FORMAT_NAMES
from scoring.importers.costs import CATALOGUE, Prices, prices_file
from scoring.matcher import (
    PASS,
    InvalidInput,
    Suite,
    limit_patterns,
    load_suite,
    parse_suite_document,
    suite_warnings,
)
from scoring.runfiles.baseline import Baseline, Comparison
from scoring.runfiles.casefield import parse_case_field
from scoring.runfiles.diagnosis import (
    CASES_KEPT,
    COMMAND,
    FIRST_PROBLEMS,
    HEAD_BYTES,
    diagnose,
    no_known_case,
    note_unknown_case,
)
from scoring.runfiles.junit import JUnitWriter
from scoring.runfiles.parallel import (
    BATCH_BYTES,
    BATCH_LINES,
    Scored,
    WorkerSettings,
    collecting_cycles_less,
    score_batches,
    score_records,
)
from scoring.runfiles.reader import READ_BUFFER, line_batches, read_run_lines
from scoring.runfiles.writers import JsonArrayWriter, SummaryWriter

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

EXIT_PASS, EXIT_FAIL, EXIT_INVALID = 0, 1, 2


@dataclass(frozen=True)
class OfflineSettings:
    """The settings scoring reads, without Django: each from the environment variable of
    its name, else the default evalsite/settings.py gives it (docs/operations.md)."""

    CASEBOOK_MAX_LINE_BYTES: int = 16 << 20
    CASEBOOK_MAX_JSON_DEPTH: int = 64
    CASEBOOK_MAX_PATTERN_LENGTH: int = 1000
    CASEBOOK_RUN_TIME_BUDGET_SECONDS: float = 10.0
    CASEBOOK_ENVIRONMENT_CPU_SECONDS: float = 5.0
    CASEBOOK_ENVIRONMENT_MEMORY_MB: int = 1024
    CASEBOOK_ENVIRONMENT_WALL_SECONDS: float = 10.0
    CASEBOOK_ENVIRONMENT_MAX_ANSWER_BYTES: int = 8 << 20
    CASEBOOK_ENVIRONMENT_REFERENCE_CACHE_BYTES: int = 32 << 20

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> OfflineSettings:
        """The settings of ``environ``; ``ValueError`` naming a variable that is no number."""
        given: dict[str, int | float] = {}
        for setting in fields(cls):
            text = environ.get(setting.name)
            if text is None:
                continue
            kind = int if isinstance(setting.default, int) else float
            try:
                given[setting.name] = kind(text)
            except ValueError:
                raise ValueError(f"{setting.name}: not a number: {text!r}") from None
        return cls(**given)  # type: ignore[arg-type]  # each of its field's type


def add_arguments(parser: argparse.ArgumentParser, settings: Any) -> None:
    """The command's arguments, the limits' defaults read from ``settings``."""
    parser.add_argument("suite_file", help="suite file, JSON or YAML")
    parser.add_argument(
        "run_file",
        help="run file: JSON lines, a JSON array of runs, or an Inspect AI log (.json or"
        " .eval); - for standard input",
    )
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="print a JSON array of reports"
    )
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
    parser.add_argument(
        "--format",
        choices=FORMAT_NAMES,
        dest="format_name",
        help="run format (default: detect)",
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="a --json output of an earlier scoring: mark each run and case as "
        "regressed, fixed, still failing, still passing or new",
    )
    parser.add_argument(
        "--fail-on",
        choices=["any", "regressions"],
        default="any",
        help="exit 1 when any run does not pass (default), or only when one regressed "
        "against --baseline",
    )
    parser.add_argument(
        "--max-line-bytes",
        type=int,
        default=settings.CASEBOOK_MAX_LINE_BYTES,
        help="a longer run line is skipped as it is read and listed as invalid "
        "(default: CASEBOOK_MAX_LINE_BYTES, %(default)s)",
    )
    parser.add_argument(
        "--max-depth",
        type=positive,
        default=settings.CASEBOOK_MAX_JSON_DEPTH,
        help="a run nested deeper is listed as invalid, unread "
        "(default: CASEBOOK_MAX_JSON_DEPTH, %(default)s)",
    )
    parser.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        default=settings.CASEBOOK_RUN_TIME_BUDGET_SECONDS,
        help="scoring one run longer than this gives it the verdict error "
        "(default: CASEBOOK_RUN_TIME_BUDGET_SECONDS, %(default)s)",
    )
    parser.add_argument(
        "--jobs",
        type=positive,
        metavar="N",
        default=os.cpu_count() or 1,
        help="score a JSON-lines file on N processes (default: every core, %(default)s);"
        " standard input and whole-file documents are read in one",
    )
    parser.add_argument(
        "--case-field",
        metavar="PATH",
        help="where each run names its case, when not in `case`: a dotted path with [n]"
        " indexes (task_id, metadata.case)",
    )
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help="cost runs at these prices first, then the catalogue's: JSON, model name to"
        ' {"input", "cached_input", "output"} US dollars per million tokens',
    )


def run(options: Mapping[str, Any], settings: Any, out: TextIO, err: TextIO) -> int:
    """Score as ``options`` (the parsed arguments) say, writing to ``out`` and ``err``;
    the exit status."""
    limit_patterns(settings.CASEBOOK_MAX_PATTERN_LENGTH)
    return _Scoring(options, settings, out, err).run()


class _Scoring:
    def __init__(self, options: Mapping[str, Any], settings: Any, out: TextIO, err: TextIO):
        self.options = options
        self.settings = settings
        self.out = out
        self.err = err
        self.max_line_bytes = options["max_line_bytes"]
        self.max_depth = options["max_depth"]
        self.time_budget = options["time_budget"]
        self.jobs = options["jobs"]
        self.prices_path = options.get("prices")

    def say(self, message: str) -> None:
        self.err.write(message + "\n")

    def fail(self, message: str) -> int:
        self.say(message)
        return EXIT_INVALID

    def run(self) -> int:
        options = self.options
        if options["fail_on"] == "regressions" and not options["baseline"]:
            return self.fail("--fail-on regressions needs --baseline FILE")
        try:
            self.prices = self.read_prices(self.prices_path)
            comparison = self.read_baseline(options["baseline"])
            with collecting_cycles_less():
                status = self.score_files(
                    options["suite_file"],
                    options["run_file"],
                    options["as_json"],
                    options["junit"],
                    options["format_name"],
                    options["case_field"],
                    comparison,
                )
            if comparison is not None and options["fail_on"] == "regressions":
                status = status if status == EXIT_INVALID else int(comparison.regressed)
        except _Said:
            status = EXIT_INVALID
        except BrokenPipeError:  # the reader went away (| head): stop quietly
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silences the flush at exit
            status = EXIT_FAIL
        return status

    def read_prices(self, path: str | None) -> Prices:
        """The prices runs are costed at: the file's first, then the catalogue's."""
        if path is None:
            return CATALOGUE
        try:
            return prices_file(path)
        except ValueError as exc:
            self.say(str(exc))
        raise _Said

    def read_baseline(self, path: str | None) -> Comparison | None:
        """The comparison with the baseline file, None without one."""
        if path is None:
            return None
        try:
            with open(path, "rb") as stream:
                return Comparison(Baseline.read(stream, path))
        except OSError as exc:
            self.say(f"{path}: cannot read the baseline: {exc.strerror}")
        except InvalidInput as exc:
            self.say("\n".join(f"{problem.path}: {problem.message}" for problem in exc.problems))
        raise _Said

    def score_files(
        self,
        suite_file: str,
        run_file: str,
        as_json: bool,
        junit: str | None,
        format_name: str | None,
        case_field: str | None,
        comparison: Comparison | None = None,
    ) -> int:
        if case_field is not None:
            try:
                parse_case_field(case_field)
            except ValueError as exc:
                return self.fail(f"--case-field: {exc}")
        try:
            text = Path(suite_file).read_bytes()
        except OSError as exc:
            return self.fail(f"{suite_file}: cannot read the suite file: {exc.strerror}")
        try:
            suite = load_suite(parse_suite_document(text, suite_file))
        except InvalidInput as exc:
            listed = "\n".join(f"  {problem}" for problem in exc.problems)
            return self.fail(f"{suite_file}: invalid suite file:\n{listed}")
        # Warnings are said, never failing (docs/formats.md#tool-catalog).
        for warning in suite_warnings(suite.data):
            self.say(f"{suite_file}: {warning.path}: warning: {warning.message}")
        # Standard input cannot be read twice: its head is kept for the diagnosis.
        stdin = _HeadKept(sys.stdin.buffer, READ_BUFFER) if run_file == "-" else None
        try:
            runs: BinaryIO = stdin or open(run_file, "rb", buffering=READ_BUFFER)  # noqa: SIM115
        except OSError as exc:
            return self.fail(f"{run_file}: cannot read the run file: {exc.strerror}")

        out = JsonArrayWriter(self.out) if as_json else SummaryWriter(self.out, suite)
        junit_writer = JUnitWriter(suite.name) if junit else None
        invalid = 0
        valid = 0
        reported = 0
        first_problems: list[str] = []
        unknown_cases: dict[str, dict[str, Any]] = {}  # in file order, as a submission's
        all_passed = True
        worker = WorkerSettings(
            text,
            suite_file,
            format_name,
            case_field,
            self.max_line_bytes,
            self.max_depth,
            self.time_budget,
            EnvironmentLimits.from_settings(self.settings),
            as_json=as_json and comparison is None and junit_writer is None,
            prices=self.prices,
        )
        with runs:
            for scored in self.scored(runs, run_file == "-", suite, worker):
                problems = scored.problems
                if scored.read:
                    valid += 1
                elif len(first_problems) < FIRST_PROBLEMS:
                    first_problems.append(str(problems[0]))
                if scored.unknown_case is not None:
                    note_unknown_case(unknown_cases, scored.unknown_case, scored.line)
                if problems:
                    invalid += 1
                    for problem in problems:
                        # A sample of an Inspect log has no line; its path names the sample.
                        at = f"{run_file}:{problem.line}" if problem.line is not None else run_file
                        field = f"{problem.path}: " if problem.path else ""
                        self.say(f"{at}: {field}{problem.message}")
                    if junit_writer:
                        junit_writer.add_invalid(scored.line, problems)
                    continue
                # A Report, or its JSON text when the workers wrote it (--json alone).
                report: Any = scored.report
                mark = comparison.add(report) if comparison is not None else None
                out.add_report(report, mark)
                reported += 1
                if junit_writer:
                    junit_writer.add_report(report, scored.seconds, mark)
                all_passed &= scored.verdict == PASS
        out.finish(invalid, comparison)
        if not valid:
            head = stdin.head if stdin is not None else _head_of(run_file)
            self.say(f"{run_file}: {diagnose(head, first_problems, invalid=invalid, via=COMMAND)}")
        elif not reported and unknown_cases:
            suite_cases = [case.key for case in suite.cases]
            more = len(unknown_cases) >= CASES_KEPT
            message = no_known_case(list(unknown_cases), valid, suite_cases, more=more, via=COMMAND)
            self.say(f"{run_file}: {message}")
        if junit is not None and junit_writer is not None:
            try:
                with open(junit, "w", encoding="utf-8") as xml:
                    junit_writer.write(xml)
            except OSError as exc:
                return self.fail(f"{junit}: cannot write the JUnit file: {exc.strerror}")
        if invalid or not valid:
            return EXIT_INVALID
        return EXIT_PASS if all_passed else EXIT_FAIL

    def scored(
        self, runs: BinaryIO, from_stdin: bool, suite: Suite, worker: WorkerSettings
    ) -> Iterator[Scored]:
        """The run file's records scored, in file order: a JSON-lines file on ``--jobs``
        processes, anything else (standard input, one document of runs) in this one."""
        if self.jobs > 1 and not from_stdin:
            batches = line_batches(
                runs,
                max_line_bytes=self.max_line_bytes,
                batch_lines=BATCH_LINES,
                batch_bytes=BATCH_BYTES,
            )
            if batches is not None:
                return score_batches(batches, self.jobs, worker)
        lines = read_run_lines(
            runs,
            format_name=worker.format_name,
            case_field=worker.case_field,
            max_line_bytes=self.max_line_bytes,
            max_depth=self.max_depth,
            prices=worker.prices,
        )
        return score_records(lines, suite, self.time_budget, worker.environment_limits)


class _Said(Exception):
    """Invalid input, said on standard error already."""


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number ≥ 1, not {text!r}")
    return int(text)


def _head_of(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read(HEAD_BYTES)


class _HeadKept(io.BufferedReader):
    """A stream that keeps the first ``HEAD_BYTES`` read from it, in ``head``."""

    def __init__(self, inner: BinaryIO, buffer_size: int) -> None:
        self._recording = _Recording(inner)
        super().__init__(self._recording, buffer_size)

    @property
    def head(self) -> bytes:
        return bytes(self._recording.head)


class _Recording(io.RawIOBase):
    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner
        self.head = bytearray()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)
        data = self.inner.read(len(view))
        if len(self.head) < HEAD_BYTES:
            self.head += data[: HEAD_BYTES - len(self.head)]
        view[: len(data)] = data
        return len(data)
