"""API tokens (docs/api.md#authentication, ``Authorization: Token KEY``): a user's named tokens,
made on the settings page, their suite tokens, made on a suite's page, and the single token of
``manage.py drf_create_token`` (DRF's own model), which is still accepted. A named or suite
token's key is shown once; only its SHA-256 is stored (a key is 160 random bits, so a plain hash
is enough: there is nothing to guess).

A suite token sends live telemetry to its suite only: the OTLP receivers accept it, every other
endpoint refuses it (``accepted``).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from .models import ApiToken, Suite, User

# How stale ``last_used`` may be: a CI job's hundred requests a minute cost one write.
LAST_USED_PRECISION = timedelta(minutes=1)
ONLY_OTLP = (
    "This is a suite token: it only sends live traces to its suite (/otlp/v1/traces, "
    "/otlp/v1/logs). Use a named token of your settings page (/settings/) for the API."
)


class NameTaken(ValueError):
    pass


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create(user: User, name: str, *, suite: Suite | None = None, label="") -> tuple[ApiToken, str]:
    """A new token named ``name`` (for ``suite`` and ``label``: a suite token), and its key
    (which is not kept). Whether the user may make a suite token is the caller's to check."""
    key = secrets.token_hex(20)
    try:
        with transaction.atomic():
            token = ApiToken.objects.create(
                user=user, name=name, key_hash=_hash(key), suite=suite, label=label
            )
    except IntegrityError:
        where = " for this suite" if suite is not None else ""
        raise NameTaken(f"You already have a token named “{name}”{where}.") from None
    return token, key


def suite_of(token) -> Suite | None:
    """The suite a suite token sends to (its team loaded); None for any other token."""
    return getattr(token, "suite", None)


def accepted(token, *, otlp: bool) -> bool:
    """Whether an endpoint accepts the token: a suite token only by the OTLP receivers
    (``otlp``); every other token everywhere. Refused, it is answered with ``ONLY_OTLP``."""
    return otlp or suite_of(token) is None


def replace(token: ApiToken) -> tuple[ApiToken, str]:
    """A new key for ``token``, under the same name; the old key is refused from now on."""
    key = secrets.token_hex(20)
    token.key_hash = _hash(key)
    token.created, token.last_used = timezone.now(), None
    token.save(update_fields=["key_hash", "created", "last_used"])
    return token, key


def user_of(key: str) -> tuple[User, ApiToken | Token] | None:
    """The active user a key belongs to, with its token; None for an unknown key."""
    token = (
        ApiToken.objects.select_related("user", "suite__team").filter(key_hash=_hash(key)).first()
    )
    if token is None:
        command_token = Token.objects.select_related("user").filter(key=key).first()
        if command_token is None or not command_token.user.is_active:
            return None
        return command_token.user, command_token
    if not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used is None or now - token.last_used > LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        token.last_used = now
    return token.user, token
