"""A real MCP server (the ``mcp`` SDK) whose ``tools/list`` the tests import as a catalog:
some of τ-bench's airline tools, with titles, annotations and an output schema.

    python tests/support/mcp_server.py                    # stdio, release 1
    python tests/support/mcp_server.py --release 2        # a tool removed, one added, one changed
    python tests/support/mcp_server.py --paged 2          # a low-level server: pages of 2 tools
    python tests/support/mcp_server.py --paged 1 --endless   # a next cursor every time
    python tests/support/mcp_server.py --http PORT [--token SECRET]   # streamable HTTP

With ``--token``, HTTP requests without ``Authorization: Bearer SECRET`` are answered 401.
The tests run it as a command (``COMMAND``) or, for HTTP, with ``http_server``.
"""

from __future__ import annotations

import argparse
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from pydantic import BaseModel, Field

NAME = "airline-tools"
COMMAND = shlex.join([sys.executable, str(Path(__file__).resolve())])


class UserDetails(BaseModel):
    user_id: str
    name: str
    membership: Annotated[str, Field(description="regular, silver or gold")]
    reservations: list[str]


def airline_server(release: int) -> MCPServer:
    server = MCPServer(NAME, version=f"{release}.0.0")

    @server.tool(
        title="Get user details",
        annotations=types.ToolAnnotations(readOnlyHint=True, openWorldHint=False),
    )
    def get_user_details(
        user_id: Annotated[str, Field(description="such as sara_doe_496")],
    ) -> UserDetails:
        """The user's profile and reservations."""
        return UserDetails(user_id=user_id, name="Sara Doe", membership="gold", reservations=[])

    @server.tool(
        title="Cancel a reservation",
        annotations=types.ToolAnnotations(destructiveHint=True, idempotentHint=True),
    )
    def cancel_reservation(reservation_id: str) -> str:
        """Cancel the whole reservation."""
        return f"cancelled {reservation_id}"

    if release == 1:

        @server.tool(annotations=types.ToolAnnotations(readOnlyHint=True, openWorldHint=True))
        def search_direct_flight(origin: str, destination: str, date: str) -> str:
            """Direct flights between two airports on a date (YYYY-MM-DD)."""
            return "[]"

        @server.tool()
        def update_reservation_baggages(
            reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
        ) -> str:
            """Change the number of checked bags."""
            return "updated"

    else:

        @server.tool(annotations=types.ToolAnnotations(readOnlyHint=True))
        def search_onestop_flight(origin: str, destination: str, date: str) -> str:
            """One-stop flights between two airports on a date (YYYY-MM-DD)."""
            return "[]"

        @server.tool(annotations=types.ToolAnnotations(idempotentHint=True))
        def update_reservation_baggages(
            reservation_id: str,
            total_baggages: int,
            nonfree_baggages: float,
            payment_id: str | None = None,
        ) -> str:
            """Change the number of checked bags."""
            return "updated"

    return server


def paged_server(page_size: int, *, endless: bool) -> Server:
    """A low-level server whose ``tools/list`` answers ``page_size`` tools at a time, the
    cursor being the next tool's index; ``endless``: it never stops giving a next cursor."""
    tools = [
        types.Tool(
            name=f"tool_{index}",
            description=f"tool number {index}",
            input_schema={
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
            },
        )
        for index in range(5)
    ]

    async def list_tools(ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params and params.cursor else 0
        end = start + page_size
        page = tools[start % len(tools) :][:page_size]
        more = endless or end < len(tools)
        return types.ListToolsResult(tools=page, next_cursor=str(end) if more else None)

    return Server(NAME, version="paged", on_list_tools=list_tools)


def serve_http(server: MCPServer, port: int, token: str | None) -> None:
    app = server.streamable_http_app()

    async def guarded(scope, receive, send):
        headers = dict(scope.get("headers") or ())
        if (
            token
            and scope["type"] == "http"
            and headers.get(b"authorization") != (f"Bearer {token}".encode())
        ):
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


async def serve_stdio(server: Server) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


@contextmanager
def http_server(token: str) -> Iterator[str]:
    """This server on streamable HTTP in a process of its own, on a free port: its URL once it
    listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [*shlex.split(COMMAND), "--http", str(port), "--token", token], stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                assert process.poll() is None, "the MCP server ended"
                time.sleep(0.1)
        else:
            raise AssertionError(f"the MCP server does not listen on port {port}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", type=int, default=1, choices=(1, 2))
    parser.add_argument("--paged", type=int, metavar="PAGE_SIZE")
    parser.add_argument("--endless", action="store_true")
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--token")
    options = parser.parse_args()
    if options.paged:
        anyio.run(serve_stdio, paged_server(options.paged, endless=options.endless))
    elif options.http:
        serve_http(airline_server(options.release), options.http, options.token)
    else:
        airline_server(options.release).run()


if __name__ == "__main__":
    main()
