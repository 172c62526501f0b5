"""Token authentication for the REST API and the OTLP receivers: the keys of tokens.py, with
an address that sends too many unknown tokens refused (throttling.py counts them)."""

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied, Throttled

from . import tokens
from .throttling import FAILED_TOKENS_BY_ADDRESS, client_address


class ThrottledTokenAuthentication(TokenAuthentication):
    """Token authentication (the keys of cases/tokens.py) that answers 429 to an address
    after too many unknown tokens.

    DRF's own throttles run after authentication and permissions, so a request with a bad
    token is refused with 401 before any throttle sees it: the count has to be kept here.

    A suite token is refused with 403 (``tokens.accepted``), and not counted as unknown;
    ``OtlpTokenAuthentication`` accepts it."""

    otlp = False
    keywords: tuple[str, ...] = ("Token",)  # the schemes accepted; ``keyword`` becomes the one sent

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
