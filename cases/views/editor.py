"""The case editor: the case, its expected calls and expectations as rows, validated by the
matcher with each problem beside its field, and a "try a run" box that scores a pasted run
against the unsaved case at once.

Every interaction posts the whole form; the server rebuilds the rows from it, applies the
action (save, add/remove/move a row, switch an expectation's type) and answers with the
editor partial, so nothing typed is lost and no page reloads.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import escape
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import reswap, retarget

from scoring.environments import EnvironmentLimits, replayer_for
from scoring.importers import detect_format, to_canonical
from scoring.matcher import (
    InvalidInput,
    Problem,
    argument_problems,
    load_run,
    load_suite,
    parse_json,
    pattern_problem,
    pretty_json,
    score,
)

from .. import audits, services
from ..drafting import draft_case
from ..editor_forms import (
    TYPE_FIELDS,
    CaseForm,
    ExpectationForm,
    ExpectedCallForm,
    Rows,
    apply_row_action,
    attach_problems,
    attach_warnings,
    row_after_action,
)
from ..models import Case, Suite
from ..permissions import REPLAY_REFUSED, can_edit_suite, can_replay, suite_for
from ..tool_catalog import argument_schemas
from .htmx import redirect_to

BLANK_CALL = {"required_args": "{}"}
BLANK_EXPECTATION = {"type": "called_tool"}


class Editor:
    """The editor's forms for one request, bound to posted data or filled from a case."""

    # The expected call's and the expectation's row that gets the focus after the swap.
    focus_call: int | None = None
    focus_exp: int | None = None

    def __init__(self, suite: Suite, *, data=None, document=None, revision=None):
        self.suite = suite
        self.loose: list[Problem] = []
        self.loose_warnings: list[Problem] = []
        self.stale: Case | None = None
        self.notice = ""
        if data is not None:
            self.case_form = CaseForm(data)
            self.calls = Rows(ExpectedCallForm, "call", Rows.posted(data, "call"), bound=True)
            self.expectations = Rows(ExpectationForm, "exp", Rows.posted(data, "exp"), bound=True)
        else:
            document = document or {"key": "", "expected_calls": [], "expectations": []}
            self.case_form = CaseForm(initial=CaseForm.initial_from(document, revision))
            calls = [ExpectedCallForm.initial_from(c) for c in document.get("expected_calls", [])]
            items = [ExpectationForm.initial_from(e) for e in document.get("expectations", [])]
            self.calls = Rows(ExpectedCallForm, "call", calls, bound=False)
            self.expectations = Rows(ExpectationForm, "exp", items, bound=False)

    @classmethod
    def with_action(cls, suite: Suite, data, action: str) -> Editor:
        """The editor after a row action (``call:add``, ``exp:remove:2``, ``refresh``), with
        what was typed kept as it was typed: nothing is validated or saved yet."""
        kind, _, verb = action.partition(":")
        rows = {}
        for prefix, blank in (("call", BLANK_CALL), ("exp", BLANK_EXPECTATION)):
            rows[prefix] = Rows.posted(data, prefix)
            if kind == prefix:
                rows[prefix] = apply_row_action(rows[prefix], verb, blank)
        editor = cls._as_typed(suite, data.dict(), rows)
        if kind in rows:
            setattr(editor, f"focus_{kind}", row_after_action(len(rows[kind]), verb))
        return editor

    @classmethod
    def with_drafted_calls(cls, suite: Suite, data, drafted: dict) -> Editor:
        """The editor with its expected calls replaced by those drafted from a run
        (``cases.drafting``), and its prompt, if empty, by the draft's; everything else as it
        was typed. Nothing is validated or saved yet; the catalog's warnings are shown."""
        fields = data.dict()
        if not fields.get("prompt", "").strip():
            fields["prompt"] = drafted["prompt"]
        calls = [ExpectedCallForm.initial_from(call) for call in drafted["expected_calls"]]
        editor = cls._as_typed(suite, fields, {"call": calls, "exp": Rows.posted(data, "exp")})
        editor.warn({"key": fields.get("key", ""), "expected_calls": drafted["expected_calls"]})
        return editor

    @classmethod
    def _as_typed(cls, suite: Suite, fields: dict, rows: dict[str, list[dict]]) -> Editor:
        editor = cls.__new__(cls)
        editor.suite, editor.loose, editor.loose_warnings, editor.stale = suite, [], [], None
        editor.notice = ""
        editor.case_form = CaseForm(initial=fields)
        editor.calls = Rows(ExpectedCallForm, "call", rows["call"], bound=False)
        editor.expectations = Rows(ExpectationForm, "exp", rows["exp"], bound=False)
        return editor

    def document(self) -> dict:
        """The case (docs/formats.md#cases) the forms hold; fields that do not parse stay empty, and
        their forms keep the errors (see ``valid``)."""
        for form in self.forms:
            form.is_valid()
        document = self.case_form.to_document()
        document["expected_calls"] = [form.to_document() for form in self.calls]
        document["expectations"] = [form.to_document() for form in self.expectations]
        return document

    @property
    def forms(self):
        return [self.case_form, *self.calls, *self.expectations]

    @property
    def valid(self) -> bool:
        return not self.loose and all(not form.errors for form in self.forms)

    def show(self, problems) -> None:
        self.loose = attach_problems(problems, self.case_form, self.calls, self.expectations)

    def warn(self, document: dict) -> None:
        """Show what the suite's tool catalog says of ``document`` beside its fields."""
        warnings = services.case_warnings(self.suite, document)
        self.loose_warnings = attach_warnings(
            warnings, self.case_form, self.calls, self.expectations
        )

    @property
    def revision(self):
        return self.case_form["revision"].value()


def _render(
    request, suite: Suite, editor: Editor, case: Case | None, *, status: int = 200, template=None
):
    context = {
        "suite": suite,
        "case": case,
        "editor": editor,
        "type_fields": TYPE_FIELDS,
        "tool_catalog": argument_schemas(services.suite_tools(suite)),
        "action_url": reverse("case_edit", args=[suite.pk, case.pk])
        if case
        else reverse("case_new", args=[suite.pk]),
    }
    if template is None:
        template = "cases/case_editor.html#editor" if request.htmx else "cases/case_editor.html"
    return render(request, template, context, status=status)


def _handle(request, suite: Suite, case: Case | None):
    if request.method != "POST":
        if case is None:
            editor = Editor(suite)
        else:
            document = services.case_document(case)
            editor = Editor(suite, document=document, revision=case.revision)
            editor.warn(document)
        return _render(request, suite, editor, case)
    action = request.POST.get("action", "save")
    if action == "draft":
        return _draft_from_pasted_run(request, suite, case)
    if action != "save":
        return _render(request, suite, Editor.with_action(suite, request.POST, action), case)
    editor = Editor(suite, data=request.POST)
    document = editor.document()
    editor.show(services.case_problems(suite, document, case))
    editor.warn(document)
    if not editor.valid:
        return _render(request, suite, editor, case, status=422)
    revision = int(editor.revision) if editor.revision not in (None, "") else None
    try:
        saved = services.save_case(suite, document, request.user, case=case, revision=revision)
    except services.StaleEdit as exc:
        editor.stale = exc.case
        return _render(request, suite, editor, case, status=409)
    except InvalidInput as exc:
        editor.show(exc.problems)
        return _render(request, suite, editor, case, status=422)
    messages.success(request, f"Saved case {saved.case.key} as version {saved.version.number}.")
    return redirect_to(request, reverse("case_edit", args=[suite.pk, saved.case.pk]))


def _draft_from_pasted_run(request, suite: Suite, case: Case | None):
    """The editor with expected calls drafted from the run pasted in the "try a run" box
    (any format the importers detect), by ``cases.drafting``' rules; or, when the pasted text
    is no run, its problems in that box, by where they are."""
    key = request.POST.get("key", "").strip() or "draft"
    try:
        line = _pasted_line(request.POST.get("run", ""), key)
        run = to_canonical(line)
    except InvalidInput as exc:
        context = {"problems": exc.problems, "report": None, "pasted": True}
        response = render(request, "cases/_try_result.html", context)
        return reswap(retarget(response, "#try-result"), "innerHTML")
    drafted = draft_case(run, key, argument_schemas(services.suite_tools(suite)))
    editor = Editor.with_drafted_calls(suite, request.POST, drafted)
    count = len(drafted["expected_calls"])
    editor.notice = (
        f"{count} expected call{'s' if count != 1 else ''} drafted from the pasted run "
        f"({detect_format(line)}): trim them, then save. Nothing is saved until then."
    )
    return _render(request, suite, editor, case, template="cases/_editor_drafted.html")


def render_draft(request, suite: Suite, document: dict):
    """The new-case editor filled with an unsaved draft (a case made from a run)."""
    editor = Editor(suite, document=document)
    editor.warn(document)
    return _render(request, suite, editor, None)


@login_required
@vary_on_headers("HX-Request")
def case_new(request, pk):
    suite = suite_for(request.user, pk, edit=True)
    return _handle(request, suite, None)


@login_required
@vary_on_headers("HX-Request")
def case_edit(request, pk, case_id):
    """Editors edit; viewers see the same page read-only (the editor refuses their saves)."""
    suite = suite_for(request.user, pk)
    case = Case.objects.filter(pk=case_id, suite=suite).first()
    if case is None:
        if request.htmx and request.method == "POST":
            # Saving a case someone removed meanwhile: say so where the user lands.
            messages.error(request, "This case was removed by someone else; nothing was saved.")
            return redirect_to(request, suite.get_absolute_url())
        raise Http404("No such case.")
    if request.method == "POST" or can_edit_suite(request.user, suite):
        suite = suite_for(request.user, pk, edit=True)
        return _handle(request, suite, case)
    document_json = pretty_json(services.case_document(case)).decode()
    context = {"suite": suite, "case": case, "document_json": document_json}
    return render(request, "cases/case_readonly.html", context)


@login_required
@require_POST
def case_delete(request, pk, case_id):
    suite = suite_for(request.user, pk, edit=True)
    case = get_object_or_404(Case, pk=case_id, suite=suite)
    version = services.delete_case(case, request.user)
    messages.success(request, f"Removed case {case.key} (version {version.number}).")
    return redirect(suite)


@login_required
@require_POST
def case_try(request, pk):
    """Score a pasted run against the case as it stands in the editor, without saving, as
    the suite scores it; a case that replays calls is tried by the suite's editors only."""
    suite = suite_for(request.user, pk)
    editor = Editor(suite, data=request.POST)
    context = {"problems": [], "report": None, "run": None}
    if not editor.valid:
        context["problems"] = [Problem("", "fix the fields marked in the editor first")]
        return render(request, "cases/_try_result.html", context)
    try:
        case = load_suite(services.one_case_suite(suite, editor.document())).cases[0]
        run = load_run(to_canonical(_pasted_line(request.POST.get("run", ""), case.key)))
    except InvalidInput as exc:
        context["problems"] = exc.problems
        return render(request, "cases/_try_result.html", context)
    if case.replays and not can_replay(request.user, suite):
        context["problems"] = [Problem("", REPLAY_REFUSED)]
        return render(request, "cases/_try_result.html", context, status=403)
    budget = settings.CASEBOOK_RUN_TIME_BUDGET_SECONDS
    replayer = replayer_for(EnvironmentLimits.from_settings(settings))
    context.update(report=score(case, run, time_budget=budget, replayer=replayer), run=run)
    return render(request, "cases/_try_result.html", context)


def _pasted_line(text: str, key: str) -> Any:
    """A pasted run as a run line (canonical JSON, an array of chat messages, or any format
    the importers read), with ``case`` filled in; ``to_canonical`` reads it."""
    if not text.strip():
        raise InvalidInput(
            [Problem("", "paste a run: canonical JSON or an array of chat messages")]
        )
    value = parse_json(text)
    if isinstance(value, list):
        value = {"messages": value}
    if isinstance(value, dict):
        value = {**value, "case": value.get("case") or key}
    return value


@login_required
@require_POST
def validate_field(request):
    """As-you-type check of one field, named by ``field``: ``kind`` is ``args`` (a JSON
    object whose values may be argument matchers) or ``regex`` (RE2). Answers the error
    text, or nothing."""
    kind, value = request.POST.get("kind"), request.POST.get(request.POST.get("field", ""), "")
    message = ""
    if kind == "regex":
        message = pattern_problem(value) or ""
    elif kind == "args" and value.strip():
        message = _args_problem(value)
    # The message quotes what was typed; the editor shows it as HTML, so it is escaped.
    html = escape(message)
    if kind == "args" and not message:
        html += "".join(
            f'<span class="field-warning">{escape(warning)}</span>'
            for warning in _typed_call_warnings(request, value)
        )
    return HttpResponse(html)


def _typed_call_warnings(request, value: str) -> list[str]:
    """What the suite's tool catalog says of the call being typed (``suite``, and the tool
    name in the field ``tool_field``), when the editor says which suite and tool."""
    suite_id, tool = (
        request.POST.get("suite", ""),
        request.POST.get(request.POST.get("tool_field", "")),
    )
    if not suite_id.isdigit() or not tool:
        return []
    suite = suite_for(request.user, int(suite_id))
    args = parse_json(value) if value.strip() else {}
    place = request.POST.get("place")
    return services.call_warnings(suite, tool, args, expectation=place == "with")


def _args_problem(text: str) -> str:
    try:
        value = parse_json(text)
    except InvalidInput as exc:
        return exc.problems[0].message
    if not isinstance(value, dict):
        return 'must be a JSON object: {"name": value, …}'
    return "; ".join(str(problem) for problem in argument_problems(value))


@login_required
@require_POST
def case_audit(request, pk):
    """The audit of the case as it stands in the editor, saved or not (docs/audit.md): the
    editor posts itself here as it is edited, and shows the answer beside the catalog's
    warnings. ``case`` is the id of the case being edited, which is no duplicate of itself."""
    suite = suite_for(request.user, pk, edit=True)
    editor = Editor(suite, data=request.POST)
    document = editor.document()
    case_id = request.POST.get("case", "")
    cases = suite.cases.filter(pk=case_id) if case_id.isdigit() else suite.cases.none()
    saved = cases.values_list("key", flat=True).first()
    latest = suite.versions.defer("audit").order_by("-number").first()
    audit = audits.case_audit(latest, document, saved) if editor.valid else None
    return render(request, "cases/_case_audit.html", {"audit": audit})
