"""The suite library's filters, for its page and for the suites API alike (one FilterSet:
the two search the same way, docs/review.md#suite-library)."""

from __future__ import annotations

import django_filters
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from .models import Case, Suite
from .permissions import visible_suites

# Tags are searched in their JSON text, where these are the JSON's own: a query made of
# them would match every tagged suite.
JSON_PUNCTUATION = set('[]",')


class SuiteFilterSet(django_filters.FilterSet):
    q = django_filters.CharFilter(
        method="_search", help_text="text in the name, description, tags or tool names"
    )
    team = django_filters.CharFilter(field_name="team__slug", help_text="only this team's suites")

    class Meta:
        model = Suite
        fields: list[str] = []

    def _search(self, suites: QuerySet[Suite], name: str, text: str) -> QuerySet[Suite]:
        found = (
            Q(name__icontains=text)
            | Q(description__icontains=text)
            | Q(cases__expected_calls__name__icontains=text)
        )
        if not set(text) & JSON_PUNCTUATION:
            found |= Q(tags__icontains=text) | Q(cases__tags__icontains=text)
        # A subquery, not a join: the joins above would repeat a suite per matching row,
        # and multiply the counts annotated on ``suites``.
        return suites.filter(pk__in=Suite.objects.filter(found).values("pk"))


def listed_suites(user) -> QuerySet[Suite]:
    """The suites the user may see, as the library lists them: with their team and
    ``case_count``, by name."""
    cases = (
        Case.objects.filter(suite=OuterRef("pk"))
        .order_by()
        .values("suite")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        visible_suites(user)
        .select_related("team")
        .annotate(case_count=Coalesce(Subquery(cases), 0))
        .order_by("name", "pk")
    )
