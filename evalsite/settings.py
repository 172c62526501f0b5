"""Casebook settings, read from the environment (12-factor).

Everything has a working default for a laptop: SQLite next to manage.py and, with no
REDIS_URL, Celery tasks run in-process (eager). Production sets DEBUG=0, which makes
SECRET_KEY and ALLOWED_HOSTS mandatory.
"""

from pathlib import Path

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from evalsite.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEBUG = env.bool("DEBUG", default=True)

SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "django-insecure-development-key-do-not-use-in-production"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"] if DEBUG else [])
if not ALLOWED_HOSTS:
    # Otherwise every request would be refused with a 400 and nothing said at start-up.
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off.")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served by the app (no CDN)
    "django_htmx",
    "django_filters",
    "template_partials",
    "csp",
    "cases",
    "scoring",
]

MIDDLEWARE = [
    "evalsite.middleware.RequestIdMiddleware",  # first: every later log line has the id
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "evalsite.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "evalsite.wsgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
# A connection kept between requests is checked before reuse, so a database restart costs
# one reconnect, not one failed request per stale connection.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Covering indexes (INCLUDE) are PostgreSQL's; SQLite makes them plain indexes, which is fine.
SILENCED_SYSTEM_CHECKS = ["models.W040"]
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A database that does not answer fails a request (and /readyz) in seconds, not minutes.
    options = DATABASES["default"].setdefault("OPTIONS", {})
    options.setdefault("connect_timeout", env.int("DB_CONNECT_TIMEOUT", default=5))
    # Every server-side cursor here (``QuerySet.iterator``) is read to its end; planned, by
    # default, for its first tenth, a filtered read chose plans three times slower. And no
    # JIT: a page's query over a million runs spent 1.7 of its 3 s compiling itself
    # (docs/review.md#scale).
    options.setdefault("options", "-c cursor_tuple_fraction=1 -c jit=off")
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite has one writer at a time, and select_for_update does nothing there. A deferred
    # transaction that reads and then writes fails at once ("database is locked") when
    # another writer went first; IMMEDIATE takes the write lock at BEGIN instead, so writers
    # queue for up to SQLITE_TIMEOUT seconds and every transaction is serialised, as the row
    # locks serialise them on PostgreSQL. WAL lets readers go on while one writes.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": env.int("SQLITE_TIMEOUT", default=20),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "cases.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Mail, for password resets: EMAIL_URL (django-environ's form, e.g.
# smtp+tls://user:password@mail.example.com:587) sets EMAIL_BACKEND, EMAIL_HOST and the rest.
# Without it, no reset is offered (the reset pages say who can set a new password) rather
# than "sending" into a refused connection.
EMAIL_URL = env.str("EMAIL_URL", default="")
if EMAIL_URL:
    vars().update(env.email_url("EMAIL_URL"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="webmaster@localhost")
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
MEDIA_ROOT = env.path("MEDIA_ROOT", default=BASE_DIR / "media")

# Security headers that only make sense behind TLS are opted into by SECURE_SSL=1.
SECURE_SSL = env.bool("SECURE_SSL", default=False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = SECURE_SSL
SECURE_SSL_REDIRECT = SECURE_SSL
# Probes call the process directly, over plain HTTP: they are answered, not redirected.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SECURE_HSTS_SECONDS = 60 * 60 * 24 * 365 if SECURE_SSL else 0
# Both bind every subdomain of the site's domain to HTTPS too: the deployer's call.
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if SECURE_SSL else None
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Content Security Policy (django-csp): no inline script, no inline style, no eval. Every
# behaviour is in static/js (data- attributes), htmx runs with allowEval off and its
# indicator style off (the htmx-config meta tag in base.html). The API docs page alone loosens
# it, for Swagger UI's inline styles (evalsite/csp.py). CSP_REPORT_ONLY=1 sends the same
# policy as report-only, to try a change in production without breaking pages.
_CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}
if env.bool("CSP_REPORT_ONLY", default=False):
    CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY_REPORT_ONLY = None, _CONTENT_SECURITY_POLICY
else:
    CONTENT_SECURITY_POLICY = _CONTENT_SECURITY_POLICY

REST_FRAMEWORK = {
    # Token first: a request without credentials then gets 401 with a WWW-Authenticate
    # challenge, as API clients expect, rather than 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "cases.authentication.ThrottledTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    # ``?format=`` is the run format of an upload (docs/api.md#conventions), not DRF's choice of
    # renderer: with the override on, ``?format=canonical`` found no renderer and answered
    # 404. Clients choose the answer's type with the Accept header.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Casebook API",
    "DESCRIPTION": "Suites of tool-calling cases, run uploads, and scored reports.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # /api/docs/ works offline and under the site's CSP: Swagger UI from our static files.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # A run's review status and a submission's status are both ``status``: named apart.
    "ENUM_NAME_OVERRIDES": {
        "ReviewStatusEnum": "scoring.models.ReviewStatus",
        "SubmissionStatusEnum": "scoring.models.Status",
    },
}

# Uploads of run files (limits give clear errors, by line where they apply).
CASEBOOK_MAX_UPLOAD_BYTES = env.int("CASEBOOK_MAX_UPLOAD_BYTES", default=2 << 30)
CASEBOOK_MAX_UNCOMPRESSED_BYTES = env.int("CASEBOOK_MAX_UNCOMPRESSED_BYTES", default=8 << 30)
CASEBOOK_MAX_LINE_BYTES = env.int("CASEBOOK_MAX_LINE_BYTES", default=16 << 20)
CASEBOOK_MAX_JSON_DEPTH = env.int("CASEBOOK_MAX_JSON_DEPTH", default=64)
# Invalid lines past this many are counted, not stored: a file of junk costs bounded rows.
CASEBOOK_MAX_STORED_INVALID_LINES = env.int("CASEBOOK_MAX_STORED_INVALID_LINES", default=1000)
# What a suite's pattern may cost (RE2 patterns, in characters), and the time scoring one run
# may take before its verdict is `error` (workers, `manage.py score`, "try a run").
CASEBOOK_MAX_PATTERN_LENGTH = env.int("CASEBOOK_MAX_PATTERN_LENGTH", default=1000)
CASEBOOK_RUN_TIME_BUDGET_SECONDS = env.float("CASEBOOK_RUN_TIME_BUDGET_SECONDS", default=10.0)
# Rows (cases, expected calls, expectations) one suite may hold: an import, a save or a
# τ-bench file that would make more is refused before anything is written.
CASEBOOK_MAX_SUITE_ROWS = env.int("CASEBOOK_MAX_SUITE_ROWS", default=100_000)
# What replaying one run's calls in an environment may use (docs/operations.md#environments):
# past a limit the sandbox process is killed and the verdict is `error`.
CASEBOOK_ENVIRONMENT_CPU_SECONDS = env.float("CASEBOOK_ENVIRONMENT_CPU_SECONDS", default=5.0)
CASEBOOK_ENVIRONMENT_MEMORY_MB = env.int("CASEBOOK_ENVIRONMENT_MEMORY_MB", default=1024)
CASEBOOK_ENVIRONMENT_WALL_SECONDS = env.float("CASEBOOK_ENVIRONMENT_WALL_SECONDS", default=10.0)
# The states and results one replay may answer (as JSON), and the reference answers a process
# keeps between runs: bytes, so that what a worker holds is bounded whatever a state holds.
CASEBOOK_ENVIRONMENT_MAX_ANSWER_BYTES = env.int(
    "CASEBOOK_ENVIRONMENT_MAX_ANSWER_BYTES", default=8 << 20
)
CASEBOOK_ENVIRONMENT_REFERENCE_CACHE_BYTES = env.int(
    "CASEBOOK_ENVIRONMENT_REFERENCE_CACHE_BYTES", default=32 << 20
)
# Wall-clock seconds one audit made in the web app (a version saved, an import previewed, a
# case edited) may spend replaying (docs/audit.md#in-its-environment): what is left is unchecked.
CASEBOOK_AUDIT_REPLAY_SECONDS = env.float("CASEBOOK_AUDIT_REPLAY_SECONDS", default=60.0)
# Runs per scoring task, and how long a submission may make no progress before the sweep
# picks it up again (a worker or the broker went away).
CASEBOOK_CHUNK_RUNS = env.int("CASEBOOK_CHUNK_RUNS", default=1000)
CASEBOOK_STALL_SECONDS = env.int("CASEBOOK_STALL_SECONDS", default=120)
# How long a review queue's item stays with the reviewer who opened it before another
# reviewer may be given it.
CASEBOOK_REVIEW_RESERVATION_SECONDS = env.int("CASEBOOK_REVIEW_RESERVATION_SECONDS", default=300)
# OpenTelemetry traces sent to /otlp/v1/traces (scoring/live/traces.py). An export body may be
# this large, compressed or not; a trace becomes a run once its root span has arrived and no
# span came for the grace period (a trace whose root never comes, after the rootless wait);
# the sweep that assembles such traces runs every CASEBOOK_TRACE_SWEEP_SECONDS (Celery beat).
CASEBOOK_OTLP_MAX_BYTES = env.int("CASEBOOK_OTLP_MAX_BYTES", default=16 << 20)
# Traces one export may hold: the spans of further traces are rejected (OTLP partial
# success), so that an export's cost is bounded by its size, not its count of traces.
CASEBOOK_OTLP_MAX_TRACES = env.int("CASEBOOK_OTLP_MAX_TRACES", default=1000)
# What one span or log record may hold (its attribute values, counting those of its events and
# links and the values inside lists; a span's events and links), and the attribute values,
# events and links of all of an export's items: past them items are rejected (OTLP partial
# success), measured before anything is built of them. An OTLP/JSON body, parsed whole, is
# refused (413) past four objects and arrays for each value the export may hold.
CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES = env.int("CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES", default=5000)
CASEBOOK_OTLP_MAX_ITEM_EVENTS = env.int("CASEBOOK_OTLP_MAX_ITEM_EVENTS", default=1000)
CASEBOOK_OTLP_MAX_ITEM_LINKS = env.int("CASEBOOK_OTLP_MAX_ITEM_LINKS", default=1000)
CASEBOOK_OTLP_MAX_ATTRIBUTES = env.int("CASEBOOK_OTLP_MAX_ATTRIBUTES", default=200_000)
CASEBOOK_TRACE_GRACE_SECONDS = env.float("CASEBOOK_TRACE_GRACE_SECONDS", default=10.0)
CASEBOOK_TRACE_ROOTLESS_SECONDS = env.float("CASEBOOK_TRACE_ROOTLESS_SECONDS", default=600.0)
CASEBOOK_TRACE_SWEEP_SECONDS = env.float("CASEBOOK_TRACE_SWEEP_SECONDS", default=5.0)
# What one trace may hold (its spans, and their bytes as sent): spans past either are
# rejected (OTLP partial success), so a trace's assembly reads a bounded amount.
CASEBOOK_TRACE_MAX_SPANS = env.int("CASEBOOK_TRACE_MAX_SPANS", default=10_000)
CASEBOOK_TRACE_MAX_BYTES = env.int("CASEBOOK_TRACE_MAX_BYTES", default=32 << 20)
CASEBOOK_TRACE_MAX_ATTRIBUTES = env.int("CASEBOOK_TRACE_MAX_ATTRIBUTES", default=200_000)
# The hour (UTC) at which runs past their suite's retention are removed (Celery beat,
# docs/operations.md#retention).
CASEBOOK_PRUNE_HOUR = env.int("CASEBOOK_PRUNE_HOUR", default=3)
# Django reads a request body into memory up to this size; run files are streamed past it.
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 << 20

# Failed sign-ins and API tokens (cases/throttling.py): counted per (username, address) pair
# and per client address within the window in the cache (CACHE_URL below: set it when there
# are several web processes, so they share the counts), then refused for the lockout. Behind a
# proxy, CASEBOOK_CLIENT_IP_HEADER names the header with the client's address (e.g.
# HTTP_X_FORWARDED_FOR); without it, REMOTE_ADDR.
CASEBOOK_SIGN_IN_FAILURES = env.int("CASEBOOK_SIGN_IN_FAILURES", default=5)
CASEBOOK_SIGN_IN_FAILURES_PER_ADDRESS = env.int("CASEBOOK_SIGN_IN_FAILURES_PER_ADDRESS", default=20)
CASEBOOK_TOKEN_FAILURES_PER_ADDRESS = env.int("CASEBOOK_TOKEN_FAILURES_PER_ADDRESS", default=20)
CASEBOOK_THROTTLE_WINDOW_SECONDS = env.int("CASEBOOK_THROTTLE_WINDOW_SECONDS", default=15 * 60)
CASEBOOK_THROTTLE_LOCKOUT_SECONDS = env.int("CASEBOOK_THROTTLE_LOCKOUT_SECONDS", default=15 * 60)
CASEBOOK_CLIENT_IP_HEADER = env.str("CASEBOOK_CLIENT_IP_HEADER", default="")

# Celery. Without REDIS_URL, tasks run in the calling process (the embedded default).
REDIS_URL = env.str("REDIS_URL", default="")
# What pages cache (comparison counts, flaky cases) and login throttling's counters: each
# process's own memory unless CACHE_URL names a Redis, which every process then shares. Not
# REDIS_URL by default: with the broker down the pages should still answer.
CACHE_URL = env.str("CACHE_URL", default="")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
    if CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 15 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 14 * 60
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Above the task time limit, so a slow task is never redelivered while it still runs.
    "visibility_timeout": 20 * 60,
    # A broker that is down or hung costs an upload seconds, not a hung request: the
    # upload is kept, and the sweep sends its tasks once the broker answers again.
    "socket_connect_timeout": 5,
    "socket_timeout": 5,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 5
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 1,
    "interval_max": 1,
}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Workers keep the logging configured here (one format for web and workers) rather than
# Celery's own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# LOG_FORMAT=json: one JSON object a line, with the request's or task's ids (evalsite/logs.py).
LOGGING = logging_config(
    env.str("LOG_FORMAT", default="plain"), env.str("LOG_LEVEL", default="INFO")
)
