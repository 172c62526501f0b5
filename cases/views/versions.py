"""Suite versions: a version read-only, its tag, and what changed against another."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from ..diff import diff_documents, predicate_labels
from ..forms import TagForm
from ..models import SuiteVersion
from ..permissions import can_edit_suite, suite_for


@login_required
def version_detail(request, pk, number):
    """A version as it was: read-only, and viewing it never creates one."""
    suite = suite_for(request.user, pk)
    version = get_object_or_404(
        SuiteVersion.objects.select_related("author"), suite=suite, number=number
    )
    labels = predicate_labels(version.document)
    cases = [(case, labels.get(case["key"], [])) for case in version.document.get("cases", [])]
    context = {
        "suite": suite,
        "version": version,
        "cases": cases,
        "can_edit": can_edit_suite(request.user, suite),
        "tag_form": TagForm(initial={"tag": version.tag}),
        "is_latest": not suite.versions.filter(number__gt=number).exists(),
    }
    return render(request, "cases/version_detail.html", context)


@login_required
@require_POST
def version_tag(request, pk, number):
    suite = suite_for(request.user, pk, edit=True)
    version = get_object_or_404(SuiteVersion, suite=suite, number=number)
    form = TagForm(request.POST)
    if form.is_valid():
        version.tag = form.cleaned_data["tag"].strip()
        version.save(update_fields=["tag"])
        messages.success(
            request, f"Version {number} tagged “{version.tag}”." if version.tag else "Tag removed."
        )
    return redirect(version)


@login_required
def version_diff(request, pk, number):
    """What changed from version ``?against=M`` (default: the one before) to this one."""
    suite = suite_for(request.user, pk)
    version = get_object_or_404(SuiteVersion, suite=suite, number=number)
    against_number = request.GET.get("against") or str(number - 1)
    if not against_number.isdigit():
        raise Http404("A version is a whole number.")
    against = get_object_or_404(SuiteVersion, suite=suite, number=int(against_number))
    context = {
        "suite": suite,
        "version": version,
        "against": against,
        "diff": diff_documents(against.document, version.document),
        "numbers": suite.versions.values_list("number", flat=True),
    }
    return render(request, "cases/version_diff.html", context)
