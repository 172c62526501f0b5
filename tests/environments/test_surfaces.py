"""End-state verdicts are the same from a worker (an upload, through the API or a page) and
from ``manage.py score``: both replay in BFCL's installed backends with one replayer."""

import io
import json

import pytest
from django.core.management import call_command

from cases import services
from scoring.models import Result
from tests.support.environments import VEHICLE_CASE

VEHICLE = {
    **VEHICLE_CASE,
    "expectations": [
        *VEHICLE_CASE["expectations"],
        {
            "type": "state_path_equals",
            "path": "VehicleControlAPI.doorStatus.driver",
            "value": "locked",
        },
    ],
}


def lock(*doors):
    return {"name": "lockDoors", "arguments": {"unlock": False, "door": list(doors)}}


RUNS = [
    {"case": "doors", "batches": [[lock("driver")]]},
    {"case": "doors", "batches": [[lock("passenger")]]},
    # an extra lookup, which changes nothing
    {
        "case": "doors",
        "batches": [[{"name": "check_tire_pressure", "arguments": {}}], [lock("driver")]],
    },
    {"case": "doors", "batches": [[{"name": "honk", "arguments": {}}]]},
]


@pytest.mark.django_db
def test_the_worker_and_manage_py_score_give_the_same_reports(suite, admin, submit, tmp_path):
    services.save_case(suite, VEHICLE, admin)
    submission = submit(suite, RUNS)
    stored = [
        result.report
        for result in Result.objects.filter(run__submission=submission).order_by("run__line")
    ]
    suite_file = tmp_path / "suite.json"
    suite_file.write_text(json.dumps(services.suite_document(suite)))
    run_file = tmp_path / "runs.jsonl"
    run_file.write_text("".join(json.dumps(run) + "\n" for run in RUNS))
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("score", str(suite_file), str(run_file), "--json", stdout=out)
    printed = json.loads(out.getvalue())
    assert [r["verdict"] for r in stored] == ["pass", "fail", "pass", "fail"]
    assert [r["predicates"] for r in printed] == [r["predicates"] for r in stored]
