from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from cases.throttling import AdminSignInForm, SignInForm

from . import csp, health

# Both sign-in forms refuse a username or an address after too many failures.
admin.site.login_form = AdminSignInForm

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("", include("cases.urls")),
    path("", include("scoring.urls")),
    path("accounts/login/", LoginView.as_view(authentication_form=SignInForm), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("evalsite.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", csp.api_docs, name="swagger-ui"),
]
