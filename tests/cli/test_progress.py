"""``casebook submit``'s progress (docs/ci.md): off a terminal, plain lines, each new status
at once and more runs scored at most every 15 seconds; on one, the bar alone."""

import io
import time

from scoring.cli.submit import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_each_status_is_said_and_counts_at_most_every_15_seconds(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    err = io.StringIO()
    progress = Progress(err)
    progress.line("scoring: 1 of 9 runs scored")
    for seconds, scored in ((1, 2), (14, 4), (16, 5)):
        clock[0] = 100.0 + seconds
        progress.line(f"scoring: {scored} of 9 runs scored", news=False)
    progress.line("scoring: 5 of 9 runs scored", news=False)  # said already
    clock[0] += 1
    progress.line("done: 9 of 9 runs scored")
    assert err.getvalue().splitlines() == [
        "scoring: 1 of 9 runs scored",
        "scoring: 5 of 9 runs scored",
        "done: 9 of 9 runs scored",
    ]


def test_on_a_terminal_the_bar_says_it_all():
    err = Terminal()
    progress = Progress(err)
    progress.line("done: 9 of 9 runs scored")
    assert err.getvalue() == ""
    with progress.bar(9, "run", "scoring"):
        pass
    assert "scoring:   0%|          | 0/9" in err.getvalue()
    assert err.getvalue().endswith("\r")  # and cleared once done
