"""A person and a script using a running Casebook over HTTP, as the upgrade tests do with
an old release and the new one alike: the API with a token, and the pages signed in, their
forms posted with the CSRF token as the browser sends it. Only addresses and form fields
every release since 3c520dd has are used."""

from __future__ import annotations

import html
import re
import time

import httpx

TIMEOUT = 120


class Refused(AssertionError):
    """An answer other than the one expected: its method, path, status and what it said."""


def _said(response: httpx.Response) -> str:
    """What a failed answer says, briefly: Django's debug page names the exception in its
    title and says its message below; anything else is cut."""
    said = [
        found.group(1)
        for pattern in (r"<title>(.*?)</title>", r'<pre class="exception_value">(.*?)</pre>')
        if (found := re.search(pattern, response.text, re.DOTALL))
    ]
    text = html.unescape(" — ".join(said)) if said else response.text
    return " ".join(text.split())[:300]


class Casebook:
    def __init__(self, base: str, *, token: str = ""):
        headers = {"Authorization": f"Token {token}"} if token else {}
        self.http = httpx.Client(base_url=base, headers=headers, timeout=TIMEOUT)

    def close(self) -> None:
        self.http.close()

    def _send(self, method: str, path: str, **kwargs) -> httpx.Response:
        """The answer, read whole; a connection the server broke (a streamed answer that
        failed half way) is refused like an error status."""
        try:
            return self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise Refused(f"{method} {path}: {type(exc).__name__}: {exc}") from exc

    def _check(self, response: httpx.Response, expected: tuple[int, ...]) -> httpx.Response:
        if response.status_code not in expected:
            request, path = response.request, response.request.url.raw_path.decode()
            raise Refused(f"{request.method} {path}: {response.status_code} {_said(response)}")
        return response

    # --- the API, with a token -------------------------------------------------------------

    def get(self, path: str, expected=(200,), **params) -> httpx.Response:
        return self._check(self._send("GET", path, params=params), expected)

    def api(self, method: str, path: str, expected=(200, 201, 202), **kwargs) -> dict:
        return self._check(self._send(method, path, **kwargs), expected).json()

    def upload(self, suite: int, body: bytes, label: str) -> dict:
        """Upload a run file and wait until it is scored; its status."""
        answer = self.api(
            "POST",
            f"/api/suites/{suite}/submissions/",
            params={"label": label},
            content=body,
            headers={"Content-Type": "application/x-ndjson"},
        )
        return self.wait_done(answer["id"])

    def wait_done(self, submission: int) -> dict:
        deadline = time.monotonic() + TIMEOUT
        while (status := self.api("GET", f"/api/submissions/{submission}/"))["status"] != "done":
            if status["status"] == "failed" or time.monotonic() > deadline:
                raise Refused(f"submission {submission} did not finish: {status}")
            time.sleep(0.2)
        return status

    def results(self, submission: int, **params) -> list[dict]:
        """Every report of the submission, each with its run's id (from its page address)."""
        reports, path = [], f"/api/submissions/{submission}/results/"
        while path:
            page = self.api("GET", path, params=params)
            for report in page["results"]:
                report["run_id"] = int(re.search(r"/runs/(\d+)/", report["html_url"]).group(1))
                reports.append(report)
            path, params = page["next"], {}
        return reports

    # --- the pages, signed in --------------------------------------------------------------

    def sign_in(self, username: str, password: str) -> None:
        self._check(self._send("GET", "/accounts/login/"), (200,))
        answer = self._send(
            "POST",
            "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": self._csrf()},
        )
        if answer.status_code != 302:
            raise Refused(f"signing in as {username}: {answer.status_code} {_said(answer)}")

    def _csrf(self) -> str:
        return self.http.cookies.get("csrftoken", "")

    def page(self, path: str, expected=(200,)) -> httpx.Response:
        return self._check(self._send("GET", path), expected)

    def post(self, path: str, data: dict, expected=(200, 302)) -> httpx.Response:
        """A form post, as the page's form sends it."""
        response = self._send("POST", path, data=data, headers={"X-CSRFToken": self._csrf()})
        if response.headers.get("location", "").startswith("/accounts/login/"):
            raise Refused(f"POST {path}: sent to sign in")
        return self._check(response, expected)
