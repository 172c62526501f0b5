"""Throttling of failed sign-ins (the sign-in page and the admin's) and of failed API tokens:
the counters. The sign-in forms that use them are in forms.py; token authentication is in
authentication.py.

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

from django.conf import settings
from django.core.cache import cache


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


def minutes(seconds: int) -> int:
    return max(1, round(seconds / 60))
