"""The library's search: every suite the user may see, matching a query and a team."""

from django.db.models import Count, Q, QuerySet

from .models import Suite
from .permissions import visible_suites


def search_suites(user, q: str = "", team: str = "") -> QuerySet[Suite]:
    """Suites the user may see, matching ``q`` in name, description, tags or tool names,
    with their ``case_count``, by name."""
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
    return (
        Suite.objects.filter(pk__in=suites.values("pk"))
        .select_related("team")
        .annotate(case_count=Count("cases", distinct=True))
        .order_by("name", "pk")
    )
