"""Every page the app serves to a browser, by URL name, and a world of real data to open them
with: the console and accessibility tests open them all (the world is a fixture in
conftest.py)."""

from __future__ import annotations

from django.urls import reverse

TASKS = 10  # of τ-bench's 50, with their 4 trials: every kind of row, quick to score twice
FAILING_TASK = "4"  # its run misses update_reservation_flights: a diff, a known failure

# Each page by URL name: its arguments, and a query string, from the world below.
PAGES = {
    "home": lambda w: {},
    "my_work": lambda w: {},
    "account": lambda w: {},
    "teams": lambda w: {},
    "team": lambda w: {"slug": w["team"].slug},
    "team_prices": lambda w: {"slug": w["team"].slug},
    "suite_new": lambda w: {},
    "suite_import": lambda w: {},
    "suite_import_bfcl": lambda w: {},
    "suite_import_tau_bench": lambda w: {},
    "suite": lambda w: {"pk": w["suite"].pk},
    "suite_settings": lambda w: {"pk": w["suite"].pk},
    "suite_replace": lambda w: {"pk": w["suite"].pk},
    "suite_tools": lambda w: {"pk": w["suite"].pk},
    "suite_version": lambda w: {"pk": w["suite"].pk, "number": 1},
    "suite_version_diff": lambda w: {"pk": w["suite"].pk, "number": 2},
    "suite_unassigned": lambda w: {"pk": w["suite"].pk},
    "case_new": lambda w: {"pk": w["suite"].pk},
    "case_edit": lambda w: {"pk": w["suite"].pk, "case_id": w["case"].pk},
    "upload": lambda w: {"pk": w["suite"].pk},
    "submission": lambda w: {"pk": w["second"].pk},
    "submission_earlier": lambda w: {"pk": w["first"].pk, "number": 1},
    "submission_failures": lambda w: {"pk": w["second"].pk},
    "submission_case_drafts": lambda w: {"pk": w["second"].pk},
    "submission_tools": lambda w: {"pk": w["second"].pk},
    "run": lambda w: {"pk": w["second"].pk, "run_id": w["run"].pk},
    "run_draft_case": lambda w: {"pk": w["second"].pk, "run_id": w["run"].pk},
    "run_promote": lambda w: ({"pk": w["second"].pk, "run_id": w["run"].pk}, "call=0-0"),
    "compare": lambda w: ({"pk": w["suite"].pk}, f"candidate={w['second'].pk}"),
    "compare_runs": lambda w: {"a": w["baseline_run"].pk, "b": w["run"].pk},
    "queues": lambda w: {"pk": w["second"].pk},
    "queue_new": lambda w: {"pk": w["second"].pk},
    "queue": lambda w: {"pk": w["queue"].pk},
    "queue_next": lambda w: {"pk": w["blind_queue"].pk},  # lands on a blind run page
    "password_change": lambda w: {},
    "password_change_done": lambda w: {},
    "password_reset": lambda w: {},
    "password_reset_done": lambda w: {},
    "password_reset_confirm": lambda w: {"uidb64": w["uid"], "token": w["token"]},
    "password_reset_complete": lambda w: {},
    "swagger-ui": lambda w: {},
}
# Pages opened with a second query: the comparison itself, beside its picker.
MORE = {"compare": lambda w: f"baseline={w['first'].pk}&candidate={w['second'].pk}"}
SIGNED_OUT = {"login": lambda w: {}}


def addresses(world: dict, pages: dict) -> list[str]:
    found = []
    for name, make in pages.items():
        made = make(world)
        kwargs, query = made if isinstance(made, tuple) else (made, "")
        url = reverse(name, kwargs=kwargs)
        found.append(f"{url}?{query}" if query else url)
        if name in MORE:
            found.append(f"{url}?{MORE[name](world)}")
    return found
