"""``manage.py import_mcp_tools SUITE (--command CMD | --url URL) --user USERNAME
[--header 'NAME: VALUE']... [--env NAME=VALUE]... [--timeout SECONDS]``
(docs/command-line.md#import_mcp_tools).

Asks a running MCP server for its tools through the ``mcp`` SDK (``tools/list``, every page)
and makes them the suite's tool catalog, as a new version, each tool kept as the server gave
it. Only this command connects to a server: the web app never does, which a contract in
pyproject.toml keeps true (nothing else imports the SDK)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import anyio
import httpx2
import mcp_types
import orjson
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter, ValidationError

from cases import services
from cases.audits import stored_audit
from cases.models import Suite
from cases.permissions import can_edit_suite
from cases.tool_catalog import tools_from_any
from scoring.matcher import InvalidInput, suite_warnings

DEFAULT_TIMEOUT = 30.0  # seconds, for the whole exchange
# A listing that never ends, or grows past what the tools import page takes, is refused.
PAGE_LIMIT = 100
SIZE_LIMIT = 20 * 1024 * 1024  # bytes of JSON, all pages together
SHOWN_NAME = 100  # characters of the server's own name and version in the version message
RAW_PAGE = TypeAdapter(dict)  # a page as the server sent it: the SDK's models drop fields


class ServerFailed(Exception):
    """The server could not be asked: it did not start, refused, or answered no listing."""


@dataclass(frozen=True)
class Listing:
    pages: list[dict]
    server: str  # "name version", as the server says, or where it was reached


class Command(BaseCommand):
    help = "Make a running MCP server's tools/list the suite's tool catalog, as a new version."

    def add_arguments(self, parser):
        parser.add_argument("suite", help="the suite's id or team-slug/suite-slug")
        server = parser.add_mutually_exclusive_group(required=True)
        server.add_argument("--command", help="start the server with this command (stdio)")
        server.add_argument("--url", help="a running server's streamable HTTP endpoint")
        parser.add_argument(
            "--user", required=True, help="who the version is by: an editor of the suite"
        )
        parser.add_argument(
            "--header",
            action="append",
            default=[],
            metavar="'NAME: VALUE'",
            help="an HTTP header for --url, such as Authorization (repeatable)",
        )
        parser.add_argument(
            "--env",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="an environment variable for --command's server (repeatable)",
        )
        parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds")

    def handle(self, suite, command, url, user, header, env, timeout, **options):
        if (header and command is not None) or (env and url is not None):
            raise CommandError("--header goes with --url, --env with --command")
        author = _author(user)
        suite = _suite(suite, author)
        server = _stdio_server(command, env) if command is not None else url
        headers = _headers(header)
        try:
            listing = anyio.run(_listing, server, headers, timeout)
            imported = tools_from_any(listing.pages)
            message = f"tools: imported {len(imported.tools)} from MCP server {listing.server}"
            version = services.replace_tools(suite, imported.tools, author, message)
        except ServerFailed as exc:
            raise CommandError(str(exc)) from None
        except InvalidInput as exc:
            said = "; ".join(
                f"{p.path}: {p.message}" if p.path else p.message for p in exc.problems
            )
            raise CommandError(f"the server's tools cannot be the catalog: {said}") from None
        for warning in suite_warnings(version.document):
            self.stderr.write(f"warning: {warning.path}: {warning.message}")
        self.stdout.write(f"{suite.team.slug}/{suite.slug} version {version.number}: {message}")
        self.stdout.write(f"audit: {stored_audit(version).summary()}")


def _author(username: str):
    author = get_user_model().objects.filter(username=username).first()
    if author is None:
        raise CommandError(f"--user {username}: no such user")
    return author


def _suite(reference: str, author) -> Suite:
    """The suite ``reference`` names (an id, or team-slug/suite-slug), which ``author`` edits."""
    team, slash, slug = reference.partition("/")
    found = Suite.objects.select_related("team")
    if slash:
        suite = found.filter(team__slug=team, slug=slug).first()
    else:
        is_id = reference.isascii() and reference.isdigit() and len(reference) < 19
        suite = found.filter(pk=int(reference)).first() if is_id else None
    if suite is None:
        raise CommandError(f"{reference}: no such suite (an id, or team-slug/suite-slug)")
    if not can_edit_suite(author, suite):
        raise CommandError(
            f"{reference}: {author.username} may not change it (the team's editors and admins do)"
        )
    return suite


def _stdio_server(command: str, env: list[str]) -> StdioServerParameters:
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise CommandError(f"--command {command!r}: {exc}") from None
    if not words:
        raise CommandError("--command is empty")
    if any(not item.partition("=")[0] or "=" not in item for item in env):
        raise CommandError("--env takes NAME=VALUE")
    variables = dict(item.partition("=")[::2] for item in env)
    return StdioServerParameters(command=words[0], args=words[1:], env=variables or None)


def _headers(items: list[str]) -> dict[str, str]:
    headers = {}
    for item in items:
        name, colon, value = item.partition(":")
        if not colon or not name.strip():
            raise CommandError(f"--header {item!r}: not 'NAME: VALUE'")
        headers[name.strip()] = value.strip()
    return headers


async def _listing(
    server: StdioServerParameters | str, headers: dict[str, str], timeout: float
) -> Listing:
    """Every page of the server's ``tools/list``, within ``timeout`` seconds in all."""
    statuses: list[int] = []  # the HTTP errors the server answered, which the SDK does not say

    async def note_status(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            statuses.append(response.status_code)

    try:
        with anyio.fail_after(timeout):
            if isinstance(server, StdioServerParameters):
                client = Client(server, read_timeout_seconds=timeout, cache=None)
                return await _pages(client, shlex.join([server.command, *server.args]))
            hooks = {"response": [note_status]}
            async with httpx2.AsyncClient(
                headers=headers, timeout=timeout, event_hooks=hooks
            ) as http:
                transport = streamable_http_client(server, http_client=http)
                client = Client(transport, read_timeout_seconds=timeout, cache=None)
                return await _pages(client, server)
    except Exception as exc:  # the SDK's task groups gather what went wrong
        failure = _first(exc)
        said = _why(failure, server, statuses, timeout)
        if said is None:
            raise
        raise ServerFailed(said) from failure


def _why(
    failure: BaseException, server: StdioServerParameters | str, statuses: list[int], timeout: float
) -> str | None:
    """What went wrong, in words; None for a failure of our own."""
    stdio = isinstance(server, StdioServerParameters)
    if isinstance(failure, ServerFailed):
        return str(failure)
    if isinstance(failure, TimeoutError):
        return f"no answer within {timeout:g} seconds: is it an MCP server, and is it up?"
    if isinstance(server, StdioServerParameters) and isinstance(failure, OSError):
        return f"the server did not start: {server.command}: {failure.strerror or failure}"
    if isinstance(failure, httpx2.TransportError):
        return f"cannot reach {server}: {failure}"
    if isinstance(failure, ValidationError):
        problem = failure.errors()[0]
        return f"not a tools/list answer: {'.'.join(map(str, problem['loc']))}: {problem['msg']}"
    if not isinstance(failure, MCPError):
        return None
    if statuses:
        return (
            f"{server} answered HTTP {statuses[0]}: refused (credentials in a --header?) "
            "or no MCP endpoint there"
        )
    if stdio and failure.message == "Connection closed":
        return "the server ended before answering: is the command an MCP server on stdio?"
    return f"the server answered an error: {failure.message} (code {failure.code})"


async def _pages(client: Client, where: str) -> Listing:
    pages: list[dict] = []
    size, cursor = 0, None
    async with client:
        while True:
            params: mcp_types.PaginatedRequestParams | None = (
                mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            request = mcp_types.ListToolsRequest(params=params)
            # The SDK takes a TypeAdapter of any type, but binds its result's type to BaseModel.
            page = await client.session.send_request(request, RAW_PAGE)  # type: ignore[type-var]
            pages.append(page)
            size += len(orjson.dumps(page))
            cursor = page.get("nextCursor")
            if not cursor:
                return Listing(pages, _server_name(client.server_info, where))
            if len(pages) >= PAGE_LIMIT or size > SIZE_LIMIT:
                raise ServerFailed(
                    f"the listing goes on past {len(pages)} pages ({size:,} bytes of JSON): "
                    f"refused (at most {PAGE_LIMIT} pages, {SIZE_LIMIT:,} bytes)"
                )


def _server_name(info: mcp_types.Implementation | None, where: str) -> str:
    """The server as it names itself (its name and version, on one line), else ``where``."""
    said = [where] if info is None else [info.name, info.version]
    return " ".join(" ".join(part.split())[:SHOWN_NAME] for part in said).strip()


def _refusal(error: MCPError) -> str:
    return f"the server answered an error: {error.message} (code {error.code})"


def _first(failure: BaseException) -> BaseException:
    """The first exception a task group gathered, however deeply nested."""
    return _first(failure.exceptions[0]) if isinstance(failure, BaseExceptionGroup) else failure
