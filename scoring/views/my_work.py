"""The "My work" page: the review queues and runs assigned to the signed-in user, across
every suite they may see."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render

from cases.permissions import visible_suites
from scoring.review.assigned_work import my_queues, my_runs

RUNS_PER_PAGE = 50


@login_required
def my_work(request):
    suites = visible_suites(request.user)
    everything = request.GET.get("runs") == "all"
    runs = my_runs(request.user, suites, open_only=not everything)
    context = {
        "queues": my_queues(request.user, suites),
        "page": Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page")),
        "everything": everything,
    }
    return render(request, "scoring/my_work.html", context)
