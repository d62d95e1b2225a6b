"""A small MCP server for the tests, written with the SDK's server API.

python mcp_demo_server.py            stdio
python mcp_demo_server.py --http     streamable HTTP on 127.0.0.1 (prints the port, then serves)
python mcp_demo_server.py --crash    exits with an error before speaking MCP
"""

from __future__ import annotations

import base64
import os
import socket
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

PNG_1X1 = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()

server = MCPServer("demo")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def shout(text: str) -> str:
    """Upper-case a text (not read-only: goes through the permission gate)."""
    return text.upper()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def picture() -> list[TextContent | ImageContent | EmbeddedResource]:
    """Return a caption, a 1x1 PNG and an embedded text resource."""
    return [
        TextContent(text="a tiny picture"),
        ImageContent(data=PNG_1X1, mime_type="image/png"),
        EmbeddedResource(
            resource=TextResourceContents(
                uri="file:///notes.txt", mime_type="text/plain", text="notes body"
            )
        ),
    ]


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def fail(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"failed on purpose: {reason}")


@server.prompt()
def review(path: str, focus: str = "bugs") -> str:
    """Review a file."""
    return f"Please review {path}, looking for {focus}."


def main() -> None:
    pid_file = os.environ.get("DEMO_PID_FILE")
    if pid_file:
        with open(pid_file, "w", encoding="utf-8") as handle:
            handle.write(str(os.getpid()))
    if "--crash" in sys.argv:
        print("demo server: refusing to start", file=sys.stderr)
        raise SystemExit(3)
    if "--http" in sys.argv:
        import anyio
        import uvicorn

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        print(sock.getsockname()[1], flush=True)
        app = server.streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        anyio.run(uvicorn.Server(config).serve, [sock])
        return
    server.run()


if __name__ == "__main__":
    main()
