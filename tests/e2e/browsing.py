"""Steps and data the browser tests share."""

# Markup that would run script, as the escaping tests put it in every field a user writes:
# shown as text, it sets nothing.
PAYLOAD = (
    "<script>window.__pwned=1</script>"
    "<img src=x onerror=window.__pwned=1>"
    '"><svg onload=window.__pwned=1>'
)


def sign_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/")


def round_trip(page, action) -> None:
    """Do ``action`` and wait until the editor it re-rendered is in place: typing into the
    old one before then would be lost."""
    with page.expect_response(lambda r: r.request.method == "POST" and "/cases/" in r.url):
        action()
    page.locator("#editor.htmx-request, #editor.htmx-swapping").wait_for(state="detached")
