"""A suite from τ-bench's results file (docs/review.md#a-suite-from-τ-benchs-results): from a
failed upload of the file, whose tasks become its suite's cases and which is then scored
again, or from the file uploaded on the suite library's import page, as a new suite. Both
show the cases and which tools only read before anything is saved."""

from __future__ import annotations

from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from cases import services
from cases.audits import suite_audit
from cases.tau_bench import Results, proposed_roles, read_results, suite_document
from cases.views.audits import audit_context
from cases.views.suites import editor_teams, only_team
from scoring.benchmarks import tau_bench_suites
from scoring.forms import TauBenchImportForm, TauBenchSuiteForm
from scoring.matcher import InvalidInput, load_suite

from .access import submission_for

PREVIEW = "scoring/tau_bench_suite.html"
IMPORTED = "Imported from τ-bench results"


@login_required
def submission_suite(request, pk):
    """The tasks of a failed submission's τ-bench file as its suite's cases: GET previews
    them, POST ``action=preview`` again with other read-only tools, ``action=save`` saves
    them as a version and scores the submission again against it."""
    submission = submission_for(request.user, pk, edit=True)
    if not tau_bench_suites.tasks_offered(submission):
        messages.error(request, "This submission has no τ-bench tasks to make cases of.")
        return redirect(submission)
    context = {"submission": submission, "suite": submission.suite, "problems": []}
    try:
        results = tau_bench_suites.submission_results(submission)
    except InvalidInput as exc:
        return render(request, PREVIEW, context | {"problems": exc.problems}, status=422)
    roles = proposed_roles(results.tools, services.suite_tools(submission.suite))
    seen = {"seen_version": submission.suite.latest_version.number}
    form = TauBenchSuiteForm(request.POST or None, user=request.user, roles=roles, initial=seen)
    if request.POST.get("action") == "save" and form.is_valid():
        return _save_into_suite(request, context, form, results)
    return _preview(request, context, form, results)


def _save_into_suite(request, context: dict, form: TauBenchSuiteForm, results: Results):
    """Save the previewed cases into the submission's suite and score it again; or the
    preview again, saying why nothing was saved."""
    submission, data = context["submission"], form.cleaned_data
    try:
        version = tau_bench_suites.write_and_rescore(
            submission, results, data["read_only"], request.user, seen_version=data["seen_version"]
        )
    except services.SuiteChanged as exc:
        form = form.seeing(exc.number)
        form.add_error(
            None,
            f"The suite was changed meanwhile (now version {exc.number}); "
            "check the cases again, then save.",
        )
    except InvalidInput as exc:
        context["problems"] = exc.problems
    else:
        messages.success(
            request,
            f"Made the file's {len(results.tasks)} tasks cases of the suite (version "
            f"{version.number}); scoring this upload against it.",
        )
        return redirect(submission)
    return _preview(request, context, form, results)


@login_required
def suite_import(request):
    """A new suite from a τ-bench results file: the file (GET, and a POST of it) previewed,
    then its tasks (carried by the preview's form) saved as the suite's version 1."""
    teams = editor_teams(request.user)
    if "tasks" in request.POST:
        return _confirm_new(request, teams)
    form = TauBenchImportForm(
        request.POST or None, request.FILES or None, teams=teams, initial={"team": only_team(teams)}
    )
    problems = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        name = data["name"].strip() or Path(data["results"].name).stem[:200] or "τ-bench"
        try:
            results = read_results(data["results"], **tau_bench_suites.read_limits())
            confirm = TauBenchSuiteForm(
                user=request.user,
                roles=proposed_roles(results.tools, []),
                initial={"team": data["team"], "name": name},
            )
            confirm.keep(results)
        except InvalidInput as exc:
            problems = exc.problems
        else:
            context = {"new_suite": {"team": data["team"], "name": name}, "problems": []}
            return _preview(request, context, confirm, results)
    context = {"form": form, "problems": problems}
    return render(
        request, "cases/suite_import_tau_bench.html", context, status=422 if problems else 200
    )


def _confirm_new(request, teams):
    form = TauBenchSuiteForm(request.POST, user=request.user, teams=teams)
    if form.refusal:
        messages.error(request, form.refusal)
        return redirect("suite_import_tau_bench")
    valid = form.is_valid()
    chosen = {"team": form.cleaned_data.get("team"), "name": form.cleaned_data.get("name")}
    context = {"new_suite": chosen, "problems": []}
    if request.POST.get("action") == "save" and valid:
        data = form.cleaned_data
        document = suite_document(data["tasks"], name=data["name"], read_only=data["read_only"])
        try:
            suite = services.create_suite(data["team"], document, request.user, IMPORTED)
        except InvalidInput as exc:
            context["problems"] = exc.problems
        else:
            messages.success(request, f"Imported {len(document['cases'])} τ-bench tasks as cases.")
            return redirect(suite)
    return _preview(request, context, form, form.carried)


def _preview(request, context: dict, form: TauBenchSuiteForm, results: Results):
    """The preview: each case as it would be with the read-only tools the form holds."""
    read_only = (
        form.cleaned_data["read_only"]
        if form.is_bound and form.is_valid()
        else (form.initial.get("read_only") or [])
    )
    document = suite_document(results, name="preview", read_only=read_only)
    cases = [
        (case, document["cases"][index]) for index, case in enumerate(load_suite(document).cases)
    ]
    catalog = services.suite_tools(context["suite"]) if context.get("suite") else []
    audit = suite_audit({**document, "tools": catalog} if catalog else document)
    context |= {"form": form, "results": results, "cases": cases, "catalog": bool(catalog)}
    context |= audit_context(audit)
    return render(request, PREVIEW, context, status=422 if form.errors else 200)
