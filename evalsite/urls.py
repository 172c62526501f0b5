from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from cases.forms import AdminSignInForm, SignInForm
from cases.views.account import SignInView, mail_required
from scoring.api.otlp_receiver import LogExportView, TraceExportView

from . import csp, health

# Both sign-in forms refuse a username or an address after too many failures.
admin.site.login_form = AdminSignInForm

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("", include("cases.urls")),
    path("", include("scoring.urls")),
    path("accounts/login/", SignInView.as_view(authentication_form=SignInForm), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password_change/",
        auth_views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password_change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    # Resetting mails a link: offered only when mail is configured (EMAIL_URL).
    path(
        "accounts/password_reset/",
        mail_required(auth_views.PasswordResetView.as_view()),
        name="password_reset",
    ),
    path(
        "accounts/password_reset/done/",
        mail_required(auth_views.PasswordResetDoneView.as_view()),
        name="password_reset_done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        mail_required(auth_views.PasswordResetConfirmView.as_view()),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        mail_required(auth_views.PasswordResetCompleteView.as_view()),
        name="password_reset_complete",
    ),
    path("admin/", admin.site.urls),
    path("api/", include("evalsite.api_urls")),
    # OTLP/HTTP's own path, where OpenTelemetry exporters send traces
    # (docs/live-traces.md#the-receiver).
    path("otlp/v1/traces", TraceExportView.as_view(), name="otlp_traces"),
    path("otlp/v1/logs", LogExportView.as_view(), name="otlp_logs"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", csp.api_docs, name="swagger-ui"),
]
