"""``casebook submit RUN_FILE --server URL --suite TEAM/SLUG|ID …`` (docs/ci.md): a run file
sent to a Casebook server through its HTTP API (docs/api.md), followed to the end of its
scoring, compared with a baseline submission on the server, and a CI gate made of the
answer.

Exit status: 0 the gate passes (or, without waiting, the file was accepted); 1 it fails;
2 invalid input (here: an unreadable file, a missing token; on the server: a file that gave
no run, invalid records); 3 the server cannot be reached or refuses, with its reason.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO
from urllib.parse import quote

import httpx
from tqdm import tqdm

from scoring.cli.summary import FAILURES, JSON, REGRESSIONS, Outcome, markdown_summary
from scoring.importers import FORMAT_NAMES
from scoring.runfiles import junit

EXIT_PASS, EXIT_FAIL, EXIT_INVALID, EXIT_UNREACHABLE = 0, 1, 2, 3
CHUNK_BYTES = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
# Waiting polls the submission often at first (a small file is scored in a second), then
# every few seconds: a large one takes minutes, and each poll is a request.
FIRST_POLL_SECONDS, LAST_POLL_SECONDS = 0.2, 3.0
FINISHED = ("done", "failed")
QUIET_SECONDS = 15.0
CONNECT_RETRIES = 3
# A server being redeployed answers 502-504 from its proxy for a while: a read (never the
# upload, which may have been taken) is tried again, after the Retry-After it gives if any.
BUSY_STATUSES = frozenset({502, 503, 504})
BUSY_RETRIES = 5
BUSY_PAUSE_SECONDS, BUSY_PAUSE_MAX_SECONDS = 1.0, 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_file", help="the run file, in any format the server reads; gzip too")
    parser.add_argument(
        "--server", required=True, help="the Casebook server, e.g. https://casebook.example.com"
    )
    parser.add_argument(
        "--suite", required=True, help="the suite: TEAM/SLUG (its team's slug and its own) or id"
    )
    parser.add_argument("--label", default="", help="the submission's label (a model, a branch)")
    parser.add_argument(
        "--token-env",
        default="CASEBOOK_TOKEN",
        metavar="VAR",
        help="the environment variable holding an API token (default: %(default)s)",
    )
    parser.add_argument(
        "--wait",
        action="store_true",
        help="follow the scoring to its end, then report and gate (--fail-on, --junit and "
        "--summary wait too)",
    )
    parser.add_argument(
        "--fail-on",
        choices=[FAILURES, REGRESSIONS],
        help="exit 1 when any run does not pass (failures, the default when waiting), or "
        "only when a case regressed against --baseline",
    )
    parser.add_argument(
        "--baseline",
        default="latest",
        metavar="LABEL|latest",
        help="the submission to compare with: the last finished one before this (latest, "
        "the default) or the last with that label",
    )
    parser.add_argument("--junit", metavar="FILE", help="write the runs as JUnit XML to FILE")
    parser.add_argument(
        "--summary", metavar="FILE", help="append a Markdown summary to FILE ($GITHUB_STEP_SUMMARY)"
    )
    parser.add_argument("--format", dest="format_name", choices=FORMAT_NAMES, help="run format")
    parser.add_argument("--case-field", metavar="PATH", help="where each run names its case")


class Refused(Exception):
    """The server could not be reached, or refused: exit 3 with this reason."""


class Invalid(Exception):
    """Invalid input: exit 2 with this reason."""


def run(
    args: argparse.Namespace, out: TextIO, err: TextIO, environ: Mapping[str, str] = os.environ
) -> int:
    token = environ.get(args.token_env, "")
    if not token:
        err.write(f"casebook: set {args.token_env} to an API token of the server's settings page\n")
        return EXIT_INVALID
    path = Path(args.run_file)
    progress = Progress(err)
    try:
        with Server(args.server, token) as server:
            return Submitting(server, args, out, progress).run(path)
    except Invalid as exc:
        err.write(f"casebook: {exc}\n")
        return EXIT_INVALID
    except Refused as exc:
        err.write(f"casebook: {exc}\n")
        return EXIT_UNREACHABLE


class Server:
    """The server's API, each error said as a ``Refused`` with the server's reason."""

    def __init__(self, url: str, token: str):
        self.base = url.rstrip("/")
        self.http = httpx.Client(
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            timeout=httpx.Timeout(60.0, connect=10.0),
            # A connection refused or reset while the server restarts is tried again.
            transport=httpx.HTTPTransport(retries=CONNECT_RETRIES),
            follow_redirects=False,  # a redirect would drop the token, or the upload's body
        )

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.base}{path}"

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self._send(method, path, **kwargs)
        tries, pause = 1, BUSY_PAUSE_SECONDS
        while method == "GET" and answer.status_code in BUSY_STATUSES and tries <= BUSY_RETRIES:
            time.sleep(_retry_after(answer, pause))
            answer = self._send(method, path, **kwargs)
            tries, pause = tries + 1, min(pause * 2, BUSY_PAUSE_MAX_SECONDS)
        where = f"{method} {answer.url.path}"
        if tries > 1 and answer.status_code in BUSY_STATUSES:
            where += f" ({tries} tries)"
        if answer.is_redirect:
            moved = answer.headers.get("Location", "")
            raise Refused(f"{where}: {answer.status_code} to {moved}: give that as --server")
        if answer.status_code >= 400:
            raise Refused(f"{where}: {answer.status_code} {_reason(answer)}")
        try:
            return answer.json()
        except ValueError:
            raise Refused(f"{where}: the answer is not JSON: is {self.base} Casebook?") from None

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return self.http.request(method, self.url(path), **kwargs)
        except httpx.TransportError as exc:
            raise Refused(f"cannot reach {self.base}: {exc or type(exc).__name__}") from None

    def get(self, path: str, **params: str) -> Any:
        return self.request("GET", path, params=params)


def _retry_after(answer: httpx.Response, default: float) -> float:
    """The pause the server asks for, in seconds (never a date: proxies send seconds), kept
    within ``BUSY_PAUSE_MAX_SECONDS``."""
    try:
        asked = float(answer.headers.get("Retry-After", default))
    except ValueError:
        asked = default
    return min(max(asked, 0.0), BUSY_PAUSE_MAX_SECONDS)


def _reason(answer: httpx.Response) -> str:
    try:
        data = answer.json()
    except ValueError:
        return answer.reason_phrase
    if isinstance(data, dict) and isinstance(detail := data.get("detail"), str):
        return detail
    return str(data)


class Progress:
    """A progress bar on a terminal (tqdm), plain lines otherwise (a CI log)."""

    def __init__(self, err: TextIO):
        self.err = err
        self.terminal = err.isatty()
        self.said = ""
        self.said_at = 0.0

    def bar(self, total: int | None, unit: str, description: str) -> tqdm:
        return tqdm(
            total=total,
            unit=unit,
            unit_scale=unit == "B",
            desc=description,
            file=self.err,
            disable=not self.terminal,
            leave=False,
        )

    def line(self, text: str, *, news: bool = True) -> None:
        """Say ``text`` on a line of its own off a terminal (the bar says it there), once;
        a line that is no news (more runs scored) at most every ``QUIET_SECONDS``, so that
        a long scoring leaves a short log."""
        now = time.monotonic()
        if self.terminal or text == self.said:
            return
        if not news and now - self.said_at < QUIET_SECONDS:
            return
        self.err.write(text + "\n")
        self.err.flush()
        self.said, self.said_at = text, now


@dataclass
class Submitting:
    server: Server
    args: argparse.Namespace
    out: TextIO
    progress: Progress

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def run(self, path: Path) -> int:
        args = self.args
        suite = self.suite(args.suite)
        sent = self.upload(path, suite["id"])
        self.say(f"Submitted {path.name} to {suite['team']}/{suite['slug']}: {sent['html_url']}")
        if not (args.wait or args.fail_on or args.junit or args.summary):
            return EXIT_PASS
        submission = self.follow(sent["status_url"])
        if submission["status"] == "failed":
            raise Invalid(f"the server could not score the file: {submission['error']}")
        comparison = self.server.get(
            f"/api/submissions/{submission['id']}/comparison/", baseline=args.baseline
        )
        outcome = Outcome(suite, submission, comparison, args.fail_on or FAILURES, args.baseline)
        self.report(outcome)
        if args.junit:
            self.write_junit(Path(args.junit), suite, submission)
        if args.summary:
            failures = self.server.get(f"/api/submissions/{submission['id']}/failures/")
            with open(args.summary, "a", encoding="utf-8") as summary:
                summary.write(markdown_summary(outcome, failures))
        if submission["invalid"]:
            raise Invalid(
                f"{submission['invalid']} record(s) of the file could not be scored: "
                f"{submission['html_url']}"
            )
        return EXIT_FAIL if outcome.gate_failed else EXIT_PASS

    def suite(self, reference: str) -> JSON:
        """The suite ``reference`` names: its id, or TEAM/SLUG."""
        if reference.isdigit():
            found: JSON = self.server.get(f"/api/suites/{reference}/")
            return found
        team, _, slug = reference.partition("/")
        if not team or not slug:
            raise Invalid(f"--suite {reference!r}: give TEAM/SLUG or the suite's id")
        page: str | None = f"/api/suites/?team={quote(team)}"
        while page:
            listed = self.server.get(page)
            for found in listed["results"]:
                if found["slug"] == slug:
                    return found
            page = listed["next"]
        raise Refused(
            f"--suite {reference}: the server has no suite {slug!r} in team {team!r} you see"
        )

    def upload(self, path: Path, suite_id: int) -> JSON:
        """The file sent gzip-compressed (as it is, if it is already), streamed from a
        temporary file: the body's length is known, memory stays flat."""
        params = {"label": self.args.label, "filename": path.name}
        if self.args.format_name:
            params["format"] = self.args.format_name
        if self.args.case_field:
            params["case_field"] = self.args.case_field
        try:
            source = path.open("rb")
        except OSError as exc:
            raise Invalid(f"{path}: cannot read the run file: {exc.strerror}") from None
        with source, tempfile.TemporaryFile() as packed:
            compressed = source.read(2) == GZIP_MAGIC
            source.seek(0)
            body = source if compressed else _gzipped(source, packed)
            size = body.seek(0, os.SEEK_END)
            body.seek(0)
            self.progress.line(f"uploading {path.name} ({size:,} bytes gzip-compressed)")
            with self.progress.bar(size, "B", "upload") as bar:
                sent: JSON = self.server.request(
                    "POST",
                    f"/api/suites/{suite_id}/submissions/",
                    params=params,
                    content=_chunks(body, bar.update),
                    headers={"Content-Length": str(size), "Content-Type": "application/gzip"},
                    # With no broker the server answers once the file is scored
                    # (docs/api.md#submissions): however long that takes.
                    timeout=httpx.Timeout(60.0, read=None),
                )
        return sent

    def follow(self, status_url: str) -> JSON:
        """The submission once scored to the end (or failed), its progress said meanwhile."""
        pause = FIRST_POLL_SECONDS
        last_status = ""
        with self.progress.bar(None, "run", "scoring") as bar:
            while True:
                submission: JSON = self.server.get(status_url)
                status, total, scored = (
                    submission["status"],
                    submission["total"],
                    submission["scored"],
                )
                bar.total = total or None
                bar.set_description(status)
                bar.update(scored - bar.n)
                said = f"{status}: {scored:,} of {total:,} runs scored"
                self.progress.line(said, news=status != last_status)
                last_status = status
                if status in FINISHED:
                    return submission
                time.sleep(pause)
                pause = min(pause * 1.5, LAST_POLL_SECONDS)

    def report(self, outcome: Outcome) -> None:
        for line in outcome.lines():
            self.say(line)

    def write_junit(self, path: Path, suite: JSON, submission: JSON) -> None:
        """The runs' reports (read from the results, page by page) as JUnit XML, as
        ``manage.py score --junit`` writes them."""
        counts = submission["counts"]
        totals = {
            "tests": submission["scored"],
            "failures": counts["fail"],
            "errors": counts["error"],
        }
        cases = (
            junit.case_element(
                suite["name"],
                report["case"],
                report["trial"],
                report["verdict"],
                [
                    (p["label"], p.get("detail"), p.get("error") is not None)
                    for p in report["predicates"]
                    if not p["passed"]
                ],
                report.get("error"),
                notes=report.get("notes", ()),
            )
            for report in self.results(submission["results_url"])
        )
        try:
            with path.open("w", encoding="utf-8") as xml:
                xml.writelines(junit.document(suite["name"], totals, cases))
        except OSError as exc:
            raise Invalid(f"{path}: cannot write the JUnit file: {exc.strerror}") from None

    def results(self, url: str | None) -> Iterator[JSON]:
        while url:
            page = self.server.get(url)
            yield from page["results"]
            url = page["next"]


def _gzipped(source: BinaryIO, packed: BinaryIO) -> BinaryIO:
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: the gzip container
    while chunk := source.read(CHUNK_BYTES):
        packed.write(compressor.compress(chunk))
    packed.write(compressor.flush())
    return packed


def _chunks(body: BinaryIO, sent: Callable[[int], Any]) -> Iterator[bytes]:
    while chunk := body.read(CHUNK_BYTES):
        sent(len(chunk))
        yield chunk
