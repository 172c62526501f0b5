"""Importing a BFCL category (its question and possible-answer files) as a new suite: a page
of the suite library, served here because the conversion is ``scoring.benchmarks.bfcl_suites``'s.
The suite is previewed with its audit before it is made."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from cases import services
from cases.forms import ConfirmNewSuiteForm, PreviewedFile
from cases.views.suites import editor_teams, new_suite_preview, only_team, read_upload
from scoring.benchmarks.bfcl_suites import read_records, suite_from_bfcl
from scoring.forms import BFCLImportForm
from scoring.matcher import InvalidInput, Problem, dump_json, parse_suite_document

NEW_BFCL = "new:bfcl"  # what a previewed BFCL suite is signed for
IMPORTED = "Imported from BFCL"


@login_required
def suite_import_bfcl(request):
    """A BFCL category (its question and possible-answer files; irrelevance and relevance
    categories have no possible answers) as a new suite: the files, then the suite they make
    and its audit."""
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
            document = _suite(data, names)
            confirm = ConfirmNewSuiteForm(user=request.user, scope=NEW_BFCL, teams=teams)
            confirm.keep(PreviewedFile(f"{document['name']}.suite.json", dump_json(document), 0))
        except InvalidInput as exc:
            problems = [_in_file(problem, names) for problem in exc.problems]
        else:
            confirm.initial["team"] = data["team"].pk
            return new_suite_preview(request, document, confirm, "suite_import_bfcl_confirm")
    return render(request, "cases/suite_import_bfcl.html", {"form": form, "problems": problems})


def _suite(data: dict, names: dict[str, str]) -> dict:
    records = {
        key: read_records(read_upload(upload).splitlines(keepends=True), key)
        for key, upload in (("questions", data["questions"]), ("answers", data["possible_answers"]))
        if upload
    }
    document = suite_from_bfcl(
        records["questions"],
        records.get("answers"),
        name=data["name"] or names["questions"].split(".")[0],
        underscore_dots=data["underscore_dots"],
    )
    services.validate_suite(document)
    return document


@login_required
@require_POST
def suite_import_bfcl_confirm(request):
    """The previewed BFCL suite made, as version 1."""
    form = ConfirmNewSuiteForm(
        request.POST, user=request.user, scope=NEW_BFCL, teams=editor_teams(request.user)
    )
    if not form.is_valid():
        said = " ".join(error for errors in form.errors.values() for error in errors)
        messages.error(request, f"{said} Nothing was imported: choose the files again.")
        return redirect("suite_import_bfcl")
    file = form.cleaned_data["file"]
    document = parse_suite_document(file.content, file.name)
    suite = services.create_suite(form.cleaned_data["team"], document, request.user, IMPORTED)
    messages.success(request, f"Imported {suite.cases.count()} BFCL cases.")
    return redirect(suite)


def _in_file(problem: Problem, names: dict[str, str]) -> Problem:
    """A BFCL problem with its file named: the path's first segment is the file's role."""
    source, _, field = problem.path.partition(".")
    where = names.get(source, source)
    return Problem(f"{where} {field}".strip(), problem.message, problem.line)
