"""Production settings come from the environment: checked in fresh processes, since the
settings module is read once per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "x" * 30 + "a-long-random-production-secret-key",
    "ALLOWED_HOSTS": "casebook.example.com",
    "SECURE_SSL": "true",
    "DATABASE_URL": "postgres://casebook@db.example.com:5432/casebook",
    "REDIS_URL": "redis://redis.example.com:6379/0",
}
PRINT_SETTINGS = """
import json
from django.conf import settings
names = ["DEBUG", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_SSL_REDIRECT",
         "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER", "ALLOWED_HOSTS", "STORAGES",
         "CELERY_TASK_ALWAYS_EAGER", "CELERY_WORKER_HIJACK_ROOT_LOGGER"]
database = settings.DATABASES["default"]
print(json.dumps({name: getattr(settings, name) for name in names} | {
    "CONN_HEALTH_CHECKS": database["CONN_HEALTH_CHECKS"],
    "connect_timeout": database["OPTIONS"]["connect_timeout"],
}))
"""


def _django(code: str, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in PRODUCTION | {"LOG_FORMAT": ""}}
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup()\n{code}"],
        env=clean | {"DJANGO_SETTINGS_MODULE": "evalsite.settings"} | env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS"])
def test_debug_off_refuses_to_start_without(missing):
    env = {name: value for name, value in PRODUCTION.items() if name != missing}
    process = _django("", **env)
    assert process.returncode != 0
    assert f"ImproperlyConfigured: {missing} must be set when DEBUG is off." in process.stderr


def test_production_settings_behind_tls():
    process = _django(PRINT_SETTINGS, **PRODUCTION)
    assert process.returncode == 0, process.stderr
    values = json.loads(process.stdout)
    assert values["DEBUG"] is False
    assert values["SESSION_COOKIE_SECURE"] is values["CSRF_COOKIE_SECURE"] is True
    assert values["SECURE_SSL_REDIRECT"] is True
    assert values["SECURE_HSTS_SECONDS"] >= 31536000
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert values["ALLOWED_HOSTS"] == ["casebook.example.com"]
    assert values["STORAGES"]["staticfiles"]["BACKEND"] == (
        "whitenoise.storage.CompressedManifestStaticFilesStorage"
    )
    assert values["CELERY_TASK_ALWAYS_EAGER"] is False
    assert values["CELERY_WORKER_HIJACK_ROOT_LOGGER"] is False
    assert values["CONN_HEALTH_CHECKS"] is True
    assert values["connect_timeout"] == 5


def test_the_deployment_check_is_clean_with_production_settings():
    # Less what the browser tests set for Playwright in this process (never in production).
    inherited = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = inherited | PRODUCTION | {"SECURE_HSTS_INCLUDE_SUBDOMAINS": "true"}
    process = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=env | {"SECURE_HSTS_PRELOAD": "true"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert "no issues" in process.stdout


def test_an_unknown_log_format_is_refused():
    process = _django("", LOG_FORMAT="xml")
    assert process.returncode != 0
    assert "LOG_FORMAT must be plain or json" in process.stderr


def test_email_url_configures_mail():
    code = (
        "from django.conf import settings as s; "
        "print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS, s.EMAIL_HOST_USER)"
    )
    process = _django(code, EMAIL_URL="smtp+tls://bot:secret@mail.example.com:587")
    assert process.returncode == 0, process.stderr
    assert process.stdout.split() == [
        "django.core.mail.backends.smtp.EmailBackend",
        "mail.example.com",
        "587",
        "True",
        "bot",
    ]
