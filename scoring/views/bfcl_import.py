"""Importing a BFCL category (its question and possible-answer files) as a new suite: a page
of the suite library, served here because the conversion is ``scoring.benchmarks.bfcl_suites``'s."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from cases import services
from cases.views.suites import editor_teams, only_team, read_upload
from scoring.benchmarks.bfcl_suites import read_records, suite_from_bfcl
from scoring.forms import BFCLImportForm
from scoring.matcher import InvalidInput, Problem


@login_required
def suite_import_bfcl(request):
    """A BFCL category (its question and possible-answer files; irrelevance and relevance
    categories have no possible answers) as a new suite."""
    teams = editor_teams(request.user)
    form = BFCLImportForm(
        request.POST or None, request.FILES or None, teams=teams, initial={"team": only_team(teams)}
    )
    problems = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        answers = data["possible_answers"]
        names = {"questions": data["questions"].name}
        if answers:
            names["answers"] = answers.name
        try:
            records = {
                key: read_records(read_upload(upload).splitlines(keepends=True), key)
                for key, upload in (("questions", data["questions"]), ("answers", answers))
                if upload
            }
            document = suite_from_bfcl(
                records["questions"],
                records.get("answers"),
                name=data["name"] or names["questions"].split(".")[0],
                underscore_dots=data["underscore_dots"],
            )
            suite = services.create_suite(
                data["team"], document, request.user, "Imported from BFCL"
            )
        except InvalidInput as exc:
            problems = [_in_file(problem, names) for problem in exc.problems]
        else:
            messages.success(request, f"Imported {suite.cases.count()} BFCL cases.")
            return redirect(suite)
    return render(request, "cases/suite_import_bfcl.html", {"form": form, "problems": problems})


def _in_file(problem: Problem, names: dict[str, str]) -> Problem:
    """A BFCL problem with its file named: the path's first segment is the file's role."""
    source, _, field = problem.path.partition(".")
    where = names.get(source, source)
    return Problem(f"{where} {field}".strip(), problem.message, problem.line)
