"""Time for a junk upload end to end, every line of it invalid: a 425-byte gzip of ``1\\n``
times 200,000, posted to the API and read to the end, in the embedded default (SQLite, Celery
eager: the request returns once the file is read).

    python bench/junk_upload.py                       # this checkout
    python bench/junk_upload.py --root /tmp/before    # another one, for before/after

Prints the request's time, the submission's ``invalid`` count and the invalid-line rows
stored (at most ``CASEBOOK_MAX_STORED_INVALID_LINES`` once the limit is in).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.embedded import ROOT, run_child

UPLOAD = """
import gzip, time
from rest_framework.test import APIClient
from scoring.models import InvalidLine, Submission
body = gzip.compress(b"1\\n" * LINES, mtime=0)
client = APIClient()
client.credentials(HTTP_AUTHORIZATION=f"Token {TOKEN}")
started = time.perf_counter()
response = client.post(
    f"/api/suites/{SUITE.pk}/submissions/", body, content_type="application/octet-stream"
)
seconds = time.perf_counter() - started
submission = Submission.objects.get(pk=response.json()["id"])
stored = InvalidLine.objects.filter(submission=submission).count()
print("RESULT", response.status_code, len(body), seconds, submission.status,
      submission.invalid, stored)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--lines", type=int, default=200_000)
    args = parser.parse_args()
    out, _ = run_child(args.root.resolve(), f"LINES = {args.lines}\n" + UPLOAD)
    result = next(line for line in out.splitlines() if line.startswith("RESULT "))
    code, size, seconds, status, invalid, stored = result.split()[1:]
    print(f"{args.root.resolve()}: {int(size):,} bytes of gzip, {args.lines:,} lines of junk")
    print(f"upload to read: {float(seconds):.1f} s (HTTP {code}), status {status}")
    print(f"invalid lines: {int(invalid):,} counted, {int(stored):,} stored")


if __name__ == "__main__":
    main()
