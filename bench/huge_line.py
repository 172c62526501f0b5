"""Peak memory reading a run file with one huge line, past the line limit
(docs/pipeline.md#limits).

    python bench/huge_line.py                       # a 600 MB line, this checkout
    python bench/huge_line.py --root /tmp/before    # the same file, another checkout
    python bench/huge_line.py --line-mb 300

The file (gzip, made a block at a time, never whole in memory) holds a valid run, one line
of ``--line-mb`` MB (a run whose final text is that long), and another valid run. It prints
the peak resident memory of (a) ``manage.py score`` reading it from standard input and (b)
the upload's ingestion through the real path (``create_submission`` on a SQLite database,
the ingest task run in-process), with the memory before ingesting, and what was read: the
long line must be an invalid line (past ``CASEBOOK_MAX_LINE_BYTES``, 16 MiB) and both
valid runs stored.
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.embedded import ROOT, megabytes, run_child

VALID = b'{"case": "greeting", "batches": [], "final_text": "Hello! How can I help?"}\n'
BLOCK = 1 << 20

INGEST = """
from scoring.ingest.pipeline import create_submission
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
before = rss()
with open(os.environ["BENCH_FILE"], "rb") as stream:
    submission = create_submission(SUITE, USER, stream, filename="huge.jsonl.gz")
submission.refresh_from_db()
lines = sorted(submission.invalid_lines.values_list("line", "reason"))
print("RESULT", before, submission.status, submission.stored_runs, json.dumps(lines))
"""


def write_file(path: Path, line_mb: int) -> None:
    """A valid run, a run whose final text makes its line ``line_mb`` MB, a valid run."""
    head = b'{"case": "greeting", "batches": [], "final_text": "'
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(VALID + head)
        remaining = line_mb * BLOCK - len(head) - 3
        block = b"a" * BLOCK
        while remaining > 0:
            out.write(block[: min(BLOCK, remaining)])
            remaining -= BLOCK
        out.write(b'"}\n' + VALID)


def score_peak(root: Path, suite: Path, path: Path) -> tuple[int, str]:
    """Peak RSS of ``manage.py score SUITE -`` fed the decompressed file, and its stderr."""
    child = subprocess.Popen(
        [sys.executable, "manage.py", "score", str(suite), "-"],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(child.stderr.read()))
    reader.start()
    with gzip.open(path, "rb") as source:
        while block := source.read(BLOCK):
            child.stdin.write(block)
    child.stdin.close()
    reader.join()
    _, _, usage = os.wait4(child.pid, 0)
    return usage.ru_maxrss * 1024, errors[0].decode().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--line-mb", type=int, default=600)
    args = parser.parse_args()
    root = args.root.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "huge.jsonl.gz"
        write_file(path, args.line_mb)
        print(f"{root}: one {args.line_mb} MB line, {path.stat().st_size:,} bytes gzip")

        peak, errors = score_peak(root, root / "cases/demo/assistant.suite.json", path)
        print(f"(a) manage.py score: peak {megabytes(peak)}")
        print(f"    stderr: {errors}")

        out, peak = run_child(root, INGEST, BENCH_FILE=str(path))
        result = next(line for line in out.splitlines() if line.startswith("RESULT "))
        before, status, stored, invalid = result.split(" ", 4)[1:]
        print(f"(b) ingest: {megabytes(int(before))} before, peak {megabytes(peak)}")
        print(f"    status {status}, {stored} runs stored, invalid lines {invalid.strip()}")


if __name__ == "__main__":
    main()
