"""Routes of the REST API, under /api/ (DESIGN.md §8)."""

from rest_framework.routers import DefaultRouter

from . import views

app_name = "api"


class Router(DefaultRouter):
    # Case keys may hold dots: ``/cases/a.json/`` is the case "a.json", not a format suffix.
    include_format_suffixes = False


router = Router()
router.register("teams", views.TeamViewSet, basename="team")
router.register(r"teams/(?P<team_slug>[-\w]+)/members", views.MemberViewSet, basename="member")
router.register("suites", views.SuiteViewSet, basename="suite")
router.register(r"suites/(?P<suite_pk>[0-9]+)/cases", views.CaseViewSet, basename="case")
router.register(r"suites/(?P<suite_pk>[0-9]+)/versions", views.VersionViewSet, basename="version")

urlpatterns = router.urls
