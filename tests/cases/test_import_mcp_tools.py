"""``manage.py import_mcp_tools`` against a real MCP server (tests/support/mcp_server.py): its
tools/list, every page, becomes the suite's catalog as a new version, each tool as the server
gave it; the version diff says what the next release changed; and each way of failing says why.
"""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from cases import services
from cases.diff import ParameterChange, diff_documents
from cases.models import Suite
from tests.support.mcp_server import COMMAND, http_server
from tests.support.pages import text


def import_tools(suite, user, *args):
    call_command("import_mcp_tools", str(suite.pk), "--user", user.username, *args)
    return Suite.objects.get(pk=suite.pk).latest_version


def test_a_servers_tools_become_the_catalog_as_given_and_the_diff_names_what_changed(
    suite, editor, as_user
):
    first = import_tools(suite, editor, "--command", COMMAND)
    assert first.message == "tools: imported 4 from MCP server airline-tools 1.0.0"
    assert first.author == editor
    tools = {tool["name"]: tool for tool in first.document["tools"]}
    assert list(tools) == [
        "get_user_details",
        "cancel_reservation",
        "search_direct_flight",
        "update_reservation_baggages",
    ]
    user_details = tools["get_user_details"]
    assert user_details["title"] == "Get user details"
    assert user_details["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert user_details["inputSchema"]["required"] == ["user_id"]
    assert "membership" in user_details["outputSchema"]["properties"]
    assert "parameters" not in user_details

    second = import_tools(suite, editor, "--command", f"{COMMAND} --release 2")
    diff = diff_documents(first.document, second.document)
    assert (diff.tools_added, diff.tools_removed) == (
        ["search_onestop_flight"],
        ["search_direct_flight"],
    )
    (change,) = diff.tool_changes
    assert change.name == "update_reservation_baggages"
    assert change.parameters_changed == [
        ParameterChange("nonfree_baggages", "integer, required", "number, required"),
        ParameterChange("payment_id", "string, required", "string | null, optional"),
    ]
    assert change.fields == ["annotations"]
    assert diff.summary() == "1 tool added, 1 tool removed, 1 tool changed"
    page = text(as_user(editor).get(reverse("suite_version_diff", args=[suite.pk, second.number])))
    assert "~ parameter <code>payment_id</code>: " in page
    assert 'string, required</span> → <span class="added">string | null, optional' in page
    assert (
        '<code>update_reservation_baggages</code> changed <span class="muted small">(annotations)'
        in page
    )


def test_the_pages_of_a_listing_are_merged_in_order_and_an_endless_one_refused(suite, editor):
    version = import_tools(suite, editor, "--command", f"{COMMAND} --paged 2")
    assert [tool["name"] for tool in version.document["tools"]] == [f"tool_{n}" for n in range(5)]
    with pytest.raises(CommandError, match="the listing goes on past 100 pages"):
        import_tools(suite, editor, "--command", f"{COMMAND} --paged 5 --endless")
    assert Suite.objects.get(pk=suite.pk).latest_version == version


def test_over_streamable_http_the_header_carries_the_credentials(suite, editor):
    with http_server(token="s3cret") as url:
        with pytest.raises(CommandError, match="answered HTTP 401: refused"):
            import_tools(suite, editor, "--url", url)
        version = import_tools(
            suite, editor, "--url", url, "--header", "Authorization: Bearer s3cret"
        )
    assert version.message == "tools: imported 4 from MCP server airline-tools 1.0.0"
    assert len(services.suite_tools(Suite.objects.get(pk=suite.pk))) == 4


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--command", "no-such-mcp-server --stdio"],
            "the server did not start: no-such-mcp-server",
        ),
        (["--command", "true"], "the server ended before answering"),
        (["--url", "http://127.0.0.1:9/mcp"], "cannot reach http://127.0.0.1:9/mcp"),
        # wc reads until its input ends, answering nothing: it stops when the command gives up
        (["--command", "wc -c", "--timeout", "0.5"], "no answer within 0.5 seconds"),
    ],
)
def test_a_server_that_cannot_be_asked_says_why_and_changes_nothing(suite, editor, args, said):
    with pytest.raises(CommandError, match=said):
        import_tools(suite, editor, *args)
    assert Suite.objects.get(pk=suite.pk).latest_version.number == 1


def test_only_the_suites_editors_import_and_the_suite_is_named_by_slugs(suite, editor, viewer):
    named = f"{suite.team.slug}/{suite.slug}"
    with pytest.raises(CommandError, match="vera-viewer may not change it"):
        call_command("import_mcp_tools", named, "--user", viewer.username, "--command", COMMAND)
    with pytest.raises(CommandError, match="no such suite"):
        call_command("import_mcp_tools", "nobody/nothing", "--user", editor.username, "--url", "x")


def test_the_command_says_what_the_new_versions_audit_found(suite, editor, capsys):
    import_tools(suite, editor, "--command", COMMAND)
    said = capsys.readouterr().out.splitlines()
    # The demo's cases call file and weather tools, which the airline server lacks.
    assert said[-1].startswith("audit: 4 cases: ")
    assert "unknown_tool)" in said[-1] or "unknown_tool," in said[-1]
