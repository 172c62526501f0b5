"""The library, Casebook's home page: the suites the user may see (``cases``' search), each
with the result of its last finished submission. Served here because it shows scoring's
results: ``cases`` never imports ``scoring``."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import OuterRef, QuerySet, Subquery
from django.shortcuts import render
from django.views.decorators.vary import vary_on_headers

from cases.filtersets import SuiteFilterSet, listed_suites
from cases.models import Suite
from cases.permissions import teams_of
from scoring.models import Status, Submission

SUITES_PER_PAGE = 25


def with_last_result(suites: QuerySet[Suite]) -> QuerySet[Suite]:
    """The suites, each annotated with its last finished submission that scored a run: its
    id, label, passed and scored counts (None when it has none). One that scored nothing
    (a live day of traces naming no case yet) is no result, as on the suite page."""
    last = Submission.objects.filter(
        suite=OuterRef("pk"), status=Status.DONE, scored__gt=0
    ).order_by("-created")
    return suites.annotate(
        last_submission=Subquery(last.values("pk")[:1]),
        last_label=Subquery(last.values("label")[:1]),
        last_passed=Subquery(last.values("passed")[:1]),
        last_scored=Subquery(last.values("scored")[:1]),
    )


@login_required
@vary_on_headers("HX-Request")
def library(request):
    filters = SuiteFilterSet(request.GET, queryset=listed_suites(request.user))
    suites = with_last_result(filters.qs)
    page = Paginator(suites, SUITES_PER_PAGE).get_page(request.GET.get("page"))
    values = filters.form.cleaned_data
    context = {"page": page, "q": values["q"], "team": values["team"]}
    context["teams"] = teams_of(request.user)
    template = "cases/library.html#results" if request.htmx else "cases/library.html"
    return render(request, template, context)
