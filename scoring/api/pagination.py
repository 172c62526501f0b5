"""Page numbers whose total the view may already know (docs/api.md#pagination)."""

from __future__ import annotations

from functools import partial

from django.core.paginator import Paginator
from rest_framework.pagination import PageNumberPagination


class CountedPaginator(Paginator):
    """A paginator told its count, so that it never runs a ``COUNT`` of the query."""

    def __init__(self, object_list, per_page, *, count: int, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        self.count = count  # in place of the cached property that would count


class CountedPagination(PageNumberPagination):
    """``PageNumberPagination``, given the total when the caller knows it: a submission's
    results are counted in its own counts (``RunFilterSet.count``), where a ``COUNT`` of a
    million rows would take longer than the page."""

    def paginate_queryset(self, queryset, request, view=None, *, count: int | None = None):
        if count is not None:
            # DRF calls the paginator class with (queryset, page size) only: a partial of
            # one serves, where its stubs allow a class alone.
            self.django_paginator_class = partial(CountedPaginator, count=count)  # type: ignore[assignment]
        return super().paginate_queryset(queryset, request, view)
