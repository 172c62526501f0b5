"""The library: every suite the user may see, searchable and filterable."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, Q, Subquery
from django.shortcuts import render
from django.views.decorators.vary import vary_on_headers

from scoring.models import Status, Submission

from ..models import Suite
from ..permissions import teams_of, visible_suites


def search_suites(user, q: str = "", team: str = ""):
    """Suites the user may see, matching ``q`` in name, description, tags or tool names."""
    suites = visible_suites(user).select_related("team")
    if team:
        suites = suites.filter(team__slug=team)
    if q:
        found = (
            Q(name__icontains=q)
            | Q(description__icontains=q)
            | Q(cases__expected_calls__name__icontains=q)
        )
        # Tags are searched in their JSON text, where quotes, commas and brackets are the
        # JSON's own: a query made of them would match every tagged suite.
        if not set(q) & set('[]",'):
            found |= Q(tags__icontains=q) | Q(cases__tags__icontains=q)
        suites = suites.filter(found)
    # Counting in a subquery: a join-and-count would multiply with the search joins above.
    last = Submission.objects.filter(suite=OuterRef("pk"), status=Status.DONE).order_by("-created")
    return (
        Suite.objects.filter(pk__in=suites.values("pk"))
        .select_related("team")
        .annotate(
            case_count=Count("cases", distinct=True),
            last_submission=Subquery(last.values("pk")[:1]),
            last_label=Subquery(last.values("label")[:1]),
            last_passed=Subquery(last.values("passed")[:1]),
            last_scored=Subquery(last.values("scored")[:1]),
        )
        .order_by("name", "pk")
    )


@login_required
@vary_on_headers("HX-Request")
def library(request):
    q = request.GET.get("q", "").strip()
    team = request.GET.get("team", "")
    page = Paginator(search_suites(request.user, q, team), 25).get_page(request.GET.get("page"))
    context = {"page": page, "q": q, "team": team, "teams": teams_of(request.user)}
    template = "cases/library.html#results" if request.htmx else "cases/library.html"
    return render(request, template, context)
