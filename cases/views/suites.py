"""Suite pages: create, import (a suite file or a BFCL category), the suite page with its
cases and history, settings, replace from a file, export, copy to another team."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from scoring.bfcl import read_records, suite_from_bfcl
from scoring.matcher import (
    InvalidInput,
    Problem,
    load_suite,
    parse_suite_document,
    suite_warnings,
)
from scoring.matcher.jsonvalue import pretty_json
from scoring.matcher.suite import SCHEMA
from scoring.trends import suite_trend

from .. import services
from ..forms import (
    BFCLImportForm,
    CopyForm,
    ImportForm,
    NewSuiteForm,
    SuiteForm,
    ToolsForm,
    match_from,
)
from ..models import Role
from ..permissions import can_edit_suite, suite_for, teams_of
from ..tool_catalog import catalog_rows, tools_from_any

MAX_SUITE_FILE = 20 * 1024 * 1024
# Warnings shown one by one after a change; the rest are counted.
SHOWN_WARNINGS = 20


def _editor_teams(user):
    return teams_of(user, at_least=Role.EDITOR)


def _only(teams):
    """The team to preselect: the user's one team, when there is just one."""
    found = list(teams[:2])
    return found[0] if len(found) == 1 else None


@login_required
def suite_new(request):
    teams = _editor_teams(request.user)
    initial = {"team": request.GET.get("team") or _only(teams)}
    form = NewSuiteForm(request.POST or None, teams=teams, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        document = {"schema": SCHEMA, "name": data["name"], "cases": []}
        if data["description"]:
            document["description"] = data["description"]
        if data["tags"]:
            document["tags"] = data["tags"]
        if (match := match_from(data)) is not None:
            document["match"] = match
        suite = services.create_suite(data["team"], document, request.user, message="Created")
        suite.visibility = data["visibility"]
        suite.save(update_fields=["visibility"])
        return redirect(suite)
    return render(request, "cases/suite_new.html", {"form": form, "teams": teams})


def _warn(request, warnings: list[Problem]) -> None:
    """The tool catalog's warnings about the saved suite, as messages on the next page."""
    for warning in warnings[:SHOWN_WARNINGS]:
        messages.warning(request, f"{warning.path}: {warning.message}")
    if len(warnings) > SHOWN_WARNINGS:
        messages.warning(request, f"and {len(warnings) - SHOWN_WARNINGS} more warnings")


def _read_upload(upload) -> bytes:
    if upload.size > MAX_SUITE_FILE:
        limit = MAX_SUITE_FILE // (1024 * 1024)
        raise InvalidInput([Problem("", f"the file is over the {limit} MB limit")])
    return upload.read()


@login_required
def suite_import(request):
    teams = _editor_teams(request.user)
    initial = {"team": _only(teams)}
    form = ImportForm(request.POST or None, request.FILES or None, teams=teams, initial=initial)
    problems = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            document = parse_suite_document(_read_upload(upload), upload.name)
            suite = services.create_suite(form.cleaned_data["team"], document, request.user)
        except InvalidInput as exc:
            problems = exc.problems
        else:
            messages.success(request, f"Imported {suite.cases.count()} cases as version 1.")
            _warn(request, suite_warnings(document))
            return redirect(suite)
    return render(request, "cases/suite_import.html", {"form": form, "problems": problems})


@login_required
def suite_import_bfcl(request):
    """A BFCL category (its question and possible-answer files; irrelevance and relevance
    categories have no possible answers) as a new suite."""
    teams = _editor_teams(request.user)
    form = BFCLImportForm(
        request.POST or None, request.FILES or None, teams=teams, initial={"team": _only(teams)}
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
                key: read_records(_read_upload(upload).splitlines(keepends=True), key)
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


def case_summaries(document: dict) -> dict[str, list[str]]:
    """Each case's expected calls, as their labels (the timeline of a passing run)."""
    try:
        suite = load_suite(document, strict=False)
    except InvalidInput:
        return {}
    return {case.key: [call.label for call in case.expected_calls] for case in suite.cases}


@login_required
def suite_detail(request, pk):
    suite = suite_for(request.user, pk)
    latest = suite.latest_version
    summaries = case_summaries(latest.document) if latest else {}
    cases = [
        (case, summaries.get(case.key, []), case.expectation_count)
        for case in suite.cases.annotate(expectation_count=Count("expectations"))
    ]
    can_edit = can_edit_suite(request.user, suite)
    context = {
        "suite": suite,
        "cases": cases,
        "latest": latest,
        "versions": suite.versions.select_related("author").defer("document")[:30],
        "submissions": suite.submissions.select_related("version", "uploader").defer(
            "version__document"
        )[:20],
        "trend": suite_trend(suite),
        "can_edit": can_edit,
        "copy_form": CopyForm(teams=_editor_teams(request.user)),
        "tools": catalog_rows(services.suite_tools(suite)),
    }
    return render(request, "cases/suite_detail.html", context)


@login_required
def suite_tools(request, pk):
    """Replace the suite's tool catalog with pasted or uploaded definitions, as a version."""
    suite = suite_for(request.user, pk, edit=True)
    form = ToolsForm(request.POST or None, request.FILES or None)
    problems = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            if upload:
                data = parse_suite_document(_read_upload(upload), upload.name)
            else:
                data = parse_suite_document(form.cleaned_data["text"], "tools.json")
            imported = tools_from_any(data)
            version = services.replace_tools(suite, imported.tools, request.user, imported.message)
        except InvalidInput as exc:
            problems = exc.problems
        else:
            said = imported.message
            messages.success(request, f"{said[0].upper()}{said[1:]}: version {version.number}.")
            _warn(request, suite_warnings(version.document))
            return redirect(suite)
    context = {
        "suite": suite,
        "form": form,
        "problems": problems,
        "submissions": suite.submissions.order_by("-pk").only("pk", "label")[:5],
    }
    return render(request, "cases/suite_tools.html", context)


@login_required
def suite_settings(request, pk):
    suite = suite_for(request.user, pk, edit=True)
    initial = {
        "name": suite.name,
        "description": suite.description,
        "tags": ", ".join(suite.tags),
        "visibility": suite.visibility,
        **SuiteForm.initial_for(suite.match),
    }
    form = SuiteForm(request.POST or None, initial=initial)
    problems = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            services.update_settings(
                suite,
                request.user,
                name=data["name"],
                description=data["description"],
                tags=data["tags"],
                match=match_from(data),
                visibility=data["visibility"],
            )
        except InvalidInput as exc:
            problems = exc.problems
        else:
            messages.success(request, "Settings saved as a new version.")
            return redirect(suite)
    return render(
        request, "cases/suite_settings.html", {"suite": suite, "form": form, "problems": problems}
    )


@login_required
def suite_replace(request, pk):
    """Replace the suite's contents with a suite file, as a new version."""
    suite = suite_for(request.user, pk, edit=True)
    form = ImportForm(request.POST or None, request.FILES or None)
    problems = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            document = parse_suite_document(_read_upload(upload), upload.name)
            version = services.replace_contents(
                suite, document, request.user, f"Imported {upload.name}"
            )
        except InvalidInput as exc:
            problems = exc.problems
        else:
            messages.success(request, f"Imported {upload.name} as version {version.number}.")
            _warn(request, suite_warnings(document))
            return redirect(suite)
    return render(
        request, "cases/suite_replace.html", {"suite": suite, "form": form, "problems": problems}
    )


def pick_version(suite, number: str | None, tag: str | None):
    """The version ``number``, else the newest tagged ``tag``, else the newest: 404 if none."""
    versions = suite.versions.order_by("-number")
    if number:
        if not number.isdigit():
            raise Http404("A version is a whole number.")
        versions = versions.filter(number=int(number))
    elif tag:
        versions = versions.filter(tag=tag)
    version = versions.first()
    if version is None:
        raise Http404("No such version.")
    return version


@login_required
def suite_export(request, pk):
    """The suite file of the current version, or of ``?version=N``."""
    suite = suite_for(request.user, pk)
    version = pick_version(suite, request.GET.get("version"), request.GET.get("tag"))
    response = HttpResponse(pretty_json(version.document), content_type="application/json")
    filename = f"{suite.slug}.v{version.number}.suite.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
@require_POST
def suite_copy(request, pk):
    suite = suite_for(request.user, pk)
    form = CopyForm(request.POST, teams=_editor_teams(request.user))
    if not form.is_valid():
        messages.error(request, "Choose a team where you are an editor.")
        return redirect(suite)
    copy = services.copy_suite(suite, form.cleaned_data["team"], request.user)
    messages.success(request, f"Copied to {copy.team.name}.")
    return redirect(copy)
