"""Routes of the REST API, under /api/ (docs/api.md): one router, so one namespace, for
the library's endpoints (``cases``) and the submissions' (``scoring``). It lives in the
project, not in ``cases``, because ``cases`` never imports ``scoring``."""

from rest_framework.routers import DefaultRouter

from cases.api import views
from scoring.api import views as scoring_views

app_name = "api"


class Router(DefaultRouter):
    # Case keys may hold dots: ``/cases/a.json/`` is the case "a.json", not a format suffix.
    include_format_suffixes = False


router = Router()
router.register("teams", views.TeamViewSet, basename="team")
router.register(r"teams/(?P<team_slug>[-\w]+)/members", views.MemberViewSet, basename="member")
router.register(
    r"teams/(?P<team_slug>[-\w]+)/labels", views.ReviewLabelViewSet, basename="team-label"
)
router.register(
    r"teams/(?P<team_slug>[-\w]+)/prices", scoring_views.ModelPriceViewSet, basename="team-price"
)
router.register("suites", views.SuiteViewSet, basename="suite")
router.register(r"suites/(?P<suite_pk>[0-9]+)/cases", views.CaseViewSet, basename="case")
router.register(r"suites/(?P<suite_pk>[0-9]+)/versions", views.VersionViewSet, basename="version")
router.register(
    r"suites/(?P<suite_pk>[0-9]+)/submissions",
    scoring_views.SuiteSubmissionViewSet,
    basename="suite-submission",
)
router.register("submissions", scoring_views.SubmissionViewSet, basename="submission")
router.register("queues", scoring_views.QueueViewSet, basename="queue")

urlpatterns = router.urls
