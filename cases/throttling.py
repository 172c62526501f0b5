"""Throttling of failed sign-ins (the sign-in page and the admin's) and of failed API tokens.

Sign-in failures are counted per (username, address) pair and per address, within ``window``
seconds; after ``limit`` failures for a key, that key is refused for ``lockout`` seconds,
whatever the password. The pair, not the username alone: an attacker guessing someone's
password from one address locks out only themselves, and the right password from another
address still works; the per-address count, higher as an office or a VPN shares an address,
slows one address guessing at many usernames. Counts live in Django's cache: Redis when
CACHE_URL is set, so every gunicorn process and every machine shares them; the in-process
cache otherwise, which is right for the one process of a laptop (settings.CACHES).

Why not django-axes (8.3.1 read for this): it compares every lockout parameter against one
failure limit (the highest count among the keys against ``AXES_FAILURE_LIMIT``), so the pair
and the address cannot have different limits; a success resets every key, the address's too,
so a guesser with one account of their own could clear their address's count; its backend
refuses ``authenticate()`` without a request (the test client's ``login()``, scripts); and the
bad-token count below would stay hand-written anyway. What is needed is a counter per key
with an expiry, which is what a cache does.
"""

import hashlib
from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.utils.translation import gettext as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied, Throttled

from . import tokens


def client_address(request) -> str:
    """The client's address: REMOTE_ADDR, or, behind a proxy that sets a header with it
    (CASEBOOK_CLIENT_IP_HEADER, e.g. HTTP_X_FORWARDED_FOR), that header's last entry, the one
    the nearest proxy added (earlier entries are whatever the client sent)."""
    header = settings.CASEBOOK_CLIENT_IP_HEADER
    if header and request.META.get(header):
        return request.META[header].rsplit(",", 1)[-1].strip()
    return request.META.get("REMOTE_ADDR", "")


@dataclass(frozen=True)
class FailureLimit:
    """At most ``limit`` failures a key within ``window`` seconds; then ``lockout`` seconds
    of refusal. The settings are read on each call, so tests and operators can change them."""

    scope: str
    limit_setting: str

    @property
    def limit(self) -> int:
        return getattr(settings, self.limit_setting)

    def _cache_key(self, value: str) -> str:
        # Hashed: a username can hold characters, and a length, that a cache key cannot.
        return f"throttle:{self.scope}:{hashlib.sha256(value.encode()).hexdigest()}"

    def is_locked(self, value: str) -> bool:
        return (cache.get(self._cache_key(value)) or 0) >= self.limit

    def record_failure(self, value: str) -> None:
        key = self._cache_key(value)
        cache.add(key, 0, timeout=settings.CASEBOOK_THROTTLE_WINDOW_SECONDS)
        try:
            failures = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, failures := 1, timeout=settings.CASEBOOK_THROTTLE_WINDOW_SECONDS)
        if failures >= self.limit:
            cache.touch(key, timeout=settings.CASEBOOK_THROTTLE_LOCKOUT_SECONDS)

    def clear(self, value: str) -> None:
        cache.delete(self._cache_key(value))


# An account from one address gets few tries; an address more, as an office or a VPN shares one.
FAILED_SIGN_INS_BY_ACCOUNT = FailureLimit("sign-in:user-ip", "CASEBOOK_SIGN_IN_FAILURES")
FAILED_SIGN_INS_BY_ADDRESS = FailureLimit("sign-in:ip", "CASEBOOK_SIGN_IN_FAILURES_PER_ADDRESS")
FAILED_TOKENS_BY_ADDRESS = FailureLimit("token:ip", "CASEBOOK_TOKEN_FAILURES_PER_ADDRESS")


def _minutes(seconds: int) -> int:
    return max(1, round(seconds / 60))


class ThrottledSignInMixin:
    """For a Django authentication form: refuses, before checking the password, a username
    at an address, or an address, that failed too often; counts each failure; a success
    clears the pair's count (not the address's: one good account must not reset a guesser's)."""

    def clean(self):
        address = client_address(self.request)
        # A NUL cannot be in a form's field (Django refuses it), so the pair is unambiguous.
        account = f"{self.cleaned_data.get('username') or ''}\0{address}"
        if FAILED_SIGN_INS_BY_ACCOUNT.is_locked(account) or FAILED_SIGN_INS_BY_ADDRESS.is_locked(
            address
        ):
            raise forms.ValidationError(
                _(
                    "Too many failed sign-ins for this account from your address, or from your "
                    "network. "
                    "Please try again in %(minutes)d minutes."
                )
                % {"minutes": _minutes(settings.CASEBOOK_THROTTLE_LOCKOUT_SECONDS)},
                code="throttled",
            )
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            FAILED_SIGN_INS_BY_ACCOUNT.record_failure(account)
            FAILED_SIGN_INS_BY_ADDRESS.record_failure(address)
            raise
        FAILED_SIGN_INS_BY_ACCOUNT.clear(account)
        return cleaned


class SignInForm(ThrottledSignInMixin, AuthenticationForm):
    pass


class AdminSignInForm(ThrottledSignInMixin, AdminAuthenticationForm):
    pass


class ThrottledTokenAuthentication(TokenAuthentication):
    """Token authentication (the keys of cases/tokens.py) that answers 429 to an address
    after too many unknown tokens.

    DRF's own throttles run after authentication and permissions, so a request with a bad
    token is refused with 401 before any throttle sees it: the count has to be kept here.

    A suite token is refused with 403 (``tokens.accepted``), and not counted as unknown;
    ``OtlpTokenAuthentication`` accepts it."""

    otlp = False
    keywords = ("Token",)  # the schemes accepted; ``keyword`` becomes the one sent

    def authenticate(self, request):
        words = get_authorization_header(request).split()
        sent = [
            word for word in self.keywords if words and word.lower().encode() == words[0].lower()
        ]
        if not sent:
            return None  # no token: session users are not refused for others' bad tokens
        self.keyword = sent[0]  # DRF's own checks read it (an instance serves one request)
        address = client_address(request)
        if FAILED_TOKENS_BY_ADDRESS.is_locked(address):
            raise Throttled(
                wait=settings.CASEBOOK_THROTTLE_LOCKOUT_SECONDS,
                detail=_("Too many requests with an invalid token from your address."),
            )
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            FAILED_TOKENS_BY_ADDRESS.record_failure(address)
            raise

    def authenticate_credentials(self, key):
        # A named token of the settings page, or the one of ``manage.py drf_create_token``.
        found = tokens.user_of(key)
        if found is None:
            raise AuthenticationFailed(_("Invalid token."))
        if not tokens.accepted(found[1], otlp=self.otlp):
            raise PermissionDenied(tokens.ONLY_OTLP)
        return found


class OtlpTokenAuthentication(ThrottledTokenAuthentication):
    """The OTLP receivers' token authentication: suite tokens are accepted too, and sent as
    ``Bearer`` as well as ``Token`` (the scheme OpenTelemetry exporters are usually given)."""

    otlp = True
    keywords = ("Token", "Bearer")


class OtlpTokenScheme(OpenApiAuthenticationExtension):
    """The OpenAPI schema's own name for it: another class under the name of DRF's token
    scheme would be a conflict."""

    target_class = OtlpTokenAuthentication
    name = "otlpTokenAuth"

    def get_security_definition(self, auto_schema):
        scheme = build_bearer_security_scheme_object("Authorization", self.target.keyword)
        return scheme | {"description": "Any API token, suite tokens included."}
