"""Suite pages: create, import a suite file, the suite page's cases and history, settings,
replace from a file, export, copy to another team.

The suite page itself, and the import of a BFCL category, are served by ``scoring`` (they
show or need scoring's parts); they build on ``suite_page_context`` and the helpers here."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from scoring.matcher import (
    InvalidInput,
    Problem,
    dump_json,
    parse_json,
    parse_suite_document,
    pretty_json,
    suite_warnings,
)

from .. import services
from ..audits import suite_audit
from ..forms import (
    ConfirmImportForm,
    ConfirmNewSuiteForm,
    CopyForm,
    ImportForm,
    NewSuiteForm,
    PreviewedFile,
    SuiteSettingsForm,
    ToolsForm,
    match_from,
)
from ..models import Role
from ..permissions import can_edit_suite, suite_for, teams_of
from ..tool_catalog import catalog_rows, tools_from_any
from .audits import audit_context

MAX_SUITE_FILE = 20 * 1024 * 1024
NEW_FILE = "new:file"  # what a new suite's previewed file is signed for
# Warnings shown one by one after a change; the rest are counted.
SHOWN_WARNINGS = 20


def editor_teams(user):
    """The teams where the user may add suites."""
    return teams_of(user, at_least=Role.EDITOR)


def only_team(teams):
    """The team to preselect: the user's one team, when there is just one."""
    found = list(teams[:2])
    return found[0] if len(found) == 1 else None


@login_required
def suite_new(request):
    teams = editor_teams(request.user)
    initial = {"team": request.GET.get("team") or only_team(teams)}
    form = NewSuiteForm(request.POST or None, teams=teams, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        suite = services.new_suite(
            data["team"],
            request.user,
            name=data["name"],
            description=data["description"],
            tags=data["tags"],
            match=match_from(data),
            visibility=data["visibility"],
        )
        return redirect(suite)
    return render(request, "cases/suite_new.html", {"form": form, "teams": teams})


def _warn(request, warnings: list[Problem]) -> None:
    """The tool catalog's warnings about the saved suite, as messages on the next page."""
    for warning in warnings[:SHOWN_WARNINGS]:
        messages.warning(request, f"{warning.path}: {warning.message}")
    if len(warnings) > SHOWN_WARNINGS:
        messages.warning(request, f"and {len(warnings) - SHOWN_WARNINGS} more warnings")


def read_upload(upload) -> bytes:
    """An uploaded suite file's bytes, refused (``InvalidInput``) past the size limit."""
    if upload.size > MAX_SUITE_FILE:
        limit = MAX_SUITE_FILE // (1024 * 1024)
        raise InvalidInput([Problem("", f"the file is over the {limit} MB limit")])
    return upload.read()


@login_required
def suite_import(request):
    """A suite file as a new suite, first step: the file, then what it would make, with its
    audit (docs/review.md#import-file)."""
    teams = editor_teams(request.user)
    initial = {"team": only_team(teams)}
    form = ImportForm(request.POST or None, request.FILES or None, teams=teams, initial=initial)
    problems = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            content = read_upload(upload)
            document = parse_suite_document(content, upload.name)
            services.validate_suite(document)
            confirm = ConfirmNewSuiteForm(user=request.user, scope=NEW_FILE, teams=teams)
            confirm.keep(PreviewedFile(upload.name, content, 0))
        except InvalidInput as exc:
            problems = exc.problems
        else:
            confirm.initial["team"] = form.cleaned_data["team"].pk
            return new_suite_preview(request, document, confirm, "suite_import_confirm")
    return render(request, "cases/suite_import.html", {"form": form, "problems": problems})


def new_suite_preview(request, document: dict, form, confirm_url: str):
    """What importing a file as a new suite would make, with its audit, and the form that
    makes it (a file's import, a BFCL category's)."""
    context = {"document": document, "form": form, "confirm_url": confirm_url}
    context |= audit_context(suite_audit(document)) | {"catalog": bool(document.get("tools"))}
    context["team"] = form.fields["team"].queryset.filter(pk=form.initial["team"]).first()
    return render(request, "cases/suite_import_preview.html", context)


@login_required
@require_POST
def suite_import_confirm(request):
    """A suite file as a new suite, second step: the previewed file as version 1."""
    form = ConfirmNewSuiteForm(
        request.POST, user=request.user, scope=NEW_FILE, teams=editor_teams(request.user)
    )
    if not form.is_valid():
        said = " ".join(error for errors in form.errors.values() for error in errors)
        messages.error(request, f"{said} Nothing was imported: choose the file again.")
        return redirect("suite_import")
    file = form.cleaned_data["file"]
    document = parse_suite_document(file.content, file.name)
    suite = services.create_suite(form.cleaned_data["team"], document, request.user)
    messages.success(request, f"Imported {suite.cases.count()} cases as version 1.")
    _warn(request, suite_warnings(document))
    return redirect(suite)


def _compiled(version):
    """The matcher's suite of ``version``; None without one, or one that no longer loads."""
    try:
        return version.matcher_suite() if version else None
    except InvalidInput:
        return None


def suite_page_context(request, suite) -> dict:
    """What the suite page shows of the suite itself: its cases (with their expected calls'
    labels, as the timeline of a passing run shows them), the expectations it gives every
    case, its history, and the forms to change and copy it."""
    latest = suite.latest_version
    compiled = _compiled(latest)
    summaries = {
        case.key: [call.label for call in case.expected_calls]
        for case in (compiled.cases if compiled else ())
    }
    cases = [
        (case, summaries.get(case.key, []), case.expectation_count)
        for case in suite.cases.annotate(expectation_count=Count("expectations"))
    ]
    can_edit = can_edit_suite(request.user, suite)
    return {
        "suite": suite,
        "cases": cases,
        "latest": latest,
        "versions": suite.versions.select_related("author").defer("document", "audit")[:30],
        "can_edit": can_edit,
        "copy_form": CopyForm(teams=editor_teams(request.user)),
        "tools": catalog_rows(services.suite_tools(suite)),
        "suite_expectations": [
            (item.describe(), getattr(item, "tools", ()))
            for item in (compiled.expectations if compiled else ())
        ],
    }


@login_required
def suite_tools(request, pk):
    """Replace the suite's tool catalog with pasted or uploaded definitions, first step: the
    definitions, then the catalog they make and the suite's audit with it."""
    suite = suite_for(request.user, pk, edit=True)
    form = ToolsForm(request.POST or None, request.FILES or None)
    problems = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            if upload:
                data = parse_suite_document(read_upload(upload), upload.name)
            else:
                data = parse_suite_document(form.cleaned_data["text"], "tools.json")
            imported = tools_from_any(data)
            document = services.with_tools(suite, imported.tools)
            confirm = ConfirmImportForm(user=request.user, scope=f"tools:{suite.pk}")
            confirm.keep(PreviewedFile(imported.message, dump_json(imported.tools), 0))
        except InvalidInput as exc:
            problems = exc.problems
        else:
            context = {"suite": suite, "imported": imported, "form": confirm}
            context |= audit_context(suite_audit(document)) | {"catalog": True}
            context["tools"] = catalog_rows(imported.tools)
            return render(request, "cases/suite_tools_preview.html", context)
    context = {
        "suite": suite,
        "form": form,
        "problems": problems,
        "submissions": suite.submissions.order_by("-pk").only("pk", "label")[:5],
    }
    return render(request, "cases/suite_tools.html", context)


@login_required
@require_POST
def suite_tools_confirm(request, pk):
    """Replace the suite's tool catalog, second step: the previewed catalog as a version."""
    suite = suite_for(request.user, pk, edit=True)
    form = ConfirmImportForm(request.POST, user=request.user, scope=f"tools:{suite.pk}")
    if not form.is_valid():
        messages.error(request, f"{form.errors['file'][0]} Nothing was imported.")
        return redirect("suite_tools", suite.pk)
    previewed = form.cleaned_data["file"]
    tools, said = parse_json(previewed.content), previewed.name
    version = services.replace_tools(suite, tools, request.user, said)
    messages.success(request, f"{said[0].upper()}{said[1:]}: version {version.number}.")
    _warn(request, suite_warnings(version.document))
    return redirect(suite)


def settings_saved(before, version) -> str:
    """What saving the settings did: a new version only when the suite file changed (the
    retention, the visibility and live traces' case attribute are the suite's, not its
    file's)."""
    if before is not None and version.pk == before.pk:
        return (
            f"Settings saved. The suite file did not change: it is still version {version.number}."
        )
    return f"Settings saved as version {version.number}."


@login_required
def suite_settings(request, pk):
    suite = suite_for(request.user, pk, edit=True)
    form = SuiteSettingsForm(request.POST or None, initial=SuiteSettingsForm.initial_of(suite))
    problems = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        before = suite.latest_version
        try:
            version = services.update_settings(
                suite,
                request.user,
                name=data["name"],
                description=data["description"],
                tags=data["tags"],
                match=match_from(data),
                visibility=data["visibility"],
                trace_case_attribute=data["trace_case_attribute"],
                trace_case_map=data["trace_case_map"],
                catalog_checks=data["catalog_checks"],
                live_retention_days=data["live_retention_days"],
                upload_retention_days=data["upload_retention_days"],
            )
        except InvalidInput as exc:
            problems = exc.problems
        else:
            messages.success(request, settings_saved(before, version))
            return redirect(suite)
    return render(
        request, "cases/suite_settings.html", {"suite": suite, "form": form, "problems": problems}
    )


@login_required
def suite_replace(request, pk):
    """Import a suite file into the suite, first step: the file, then what it would change
    (docs/review.md#import-file)."""
    suite = suite_for(request.user, pk, edit=True)
    form = ImportForm(request.POST or None, request.FILES or None)
    problems = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            return _import_preview(request, suite, upload.name, read_upload(upload))
        except InvalidInput as exc:
            problems = exc.problems
    return _replace_page(request, suite, form, problems)


def _replace_page(request, suite, form, problems):
    context = {"suite": suite, "form": form, "problems": problems}
    return render(request, "cases/suite_replace.html", context)


def _import_preview(request, suite, name: str, content: bytes):
    """The page saying what importing the file would change now, with the form that
    confirms it; ``InvalidInput`` if the file cannot be imported."""
    preview = services.import_preview(suite, parse_suite_document(content, name))
    form = ConfirmImportForm(suite=suite, user=request.user)
    form.keep(PreviewedFile(name, content, preview.version))
    context = {"suite": suite, "name": name, "preview": preview, "form": form}
    context |= audit_context(suite_audit(preview.document, suite.latest_version))
    context["catalog"] = bool(preview.document.get("tools"))
    return render(request, "cases/suite_replace_preview.html", context)


@login_required
@require_POST
def suite_replace_confirm(request, pk):
    """Import a suite file into the suite, second step: the previewed file as a new version.
    If the suite changed since the preview, nothing is saved and the page says what the file
    would change now."""
    suite = suite_for(request.user, pk, edit=True)
    form = ConfirmImportForm(request.POST, suite=suite, user=request.user)
    if not form.is_valid():
        messages.error(
            request, f"{form.errors['file'][0]} Nothing was imported: choose the file again."
        )
        return redirect("suite_replace", suite.pk)
    file = form.cleaned_data["file"]
    document = parse_suite_document(file.content, file.name)
    try:
        version = services.replace_contents(
            suite, document, request.user, f"Imported {file.name}", seen_version=file.version
        )
    except services.SuiteChanged as exc:
        messages.error(
            request,
            f"Nothing was imported: the suite was changed since the preview (it is now at "
            f"version {exc.number}). Check again what the file would change.",
        )
        try:
            return _import_preview(request, suite, file.name, file.content)
        except InvalidInput as invalid:
            return _replace_page(request, suite, ImportForm(), invalid.problems)
    messages.success(request, f"{version.message} (now version {version.number}).")
    _warn(request, suite_warnings(version.document))
    return redirect(suite)


@login_required
def suite_export(request, pk):
    """The suite file of the current version, or of ``?version=N``."""
    suite = suite_for(request.user, pk)
    version = services.pick_version(suite, request.GET.get("version"), request.GET.get("tag"))
    response = HttpResponse(pretty_json(version.document), content_type="application/json")
    filename = f"{suite.slug}.v{version.number}.suite.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
@require_POST
def suite_copy(request, pk):
    suite = suite_for(request.user, pk)
    form = CopyForm(request.POST, teams=editor_teams(request.user))
    if not form.is_valid():
        messages.error(request, "Choose a team where you are an editor.")
        return redirect(suite)
    copy = services.copy_suite(suite, form.cleaned_data["team"], request.user)
    messages.success(request, f"Copied to {copy.team.name}.")
    return redirect(copy)
