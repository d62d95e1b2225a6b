"""An MCP server on stdio for the start-up tests (issue 30), speaking just enough JSON-RPC by hand:
no SDK to import, so it starts in milliseconds. Every mode ends when its input does.

python mcp_stub_server.py MODE [ARG [READY]]

    serve           answers everything: the tool `echo` (read-only) and the prompt `hello`
    never           reads requests and never answers one, not even `initialize`
    exit            exits at once, before reading anything
    hang-list       answers `initialize`, never `tools/list`
    hang-call       serves, with the tool `wait` (read-only), whose calls it never answers
    gate FIFO       serves, but answers `initialize` only once FIFO (a named pipe) has been opened
                    for writing and closed: the test decides when, no clock involved; with READY
                    (another named pipe), opens it for writing once it has listed its prompts
    flaky MARKER    exits at once if MARKER does not exist (creating it), else serves
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

ECHO = {
    "name": "echo",
    "description": "Echo a text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "annotations": {"readOnlyHint": True},
}
WAIT = {
    "name": "wait",
    "description": "Never answers.",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
}
HELLO = {"name": "hello", "description": "Say hello."}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def serve(mode: str, argument: str | None, ready: str | None) -> None:
    tools = [WAIT] if mode == "hang-call" else [ECHO]
    while line := sys.stdin.readline():
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification (`initialized`, `cancelled`)
        method, request_id = message["method"], message["id"]
        if mode == "never":
            continue
        if method == "initialize":
            if mode == "gate" and argument is not None:
                with open(argument, encoding="utf-8") as gate:  # blocks until a writer opens
                    gate.read()  # and until it closes
            version = message["params"]["protocolVersion"]
            capabilities: dict[str, Any] = {"tools": {}, "prompts": {}}
            info = {"name": f"stub-{mode}", "version": "1"}
            result = {"protocolVersion": version, "capabilities": capabilities, "serverInfo": info}
        elif method == "tools/list":
            if mode == "hang-list":
                continue
            result = {"tools": tools}
        elif method == "prompts/list":  # what a client asks last when it starts
            send({"id": request_id, "result": {"prompts": [HELLO]}})
            if ready is not None:
                open(ready, "w", encoding="utf-8").close()  # blocks until the test reads it
            continue
        elif method == "prompts/get":
            result = {"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}]}
        elif method == "tools/call":
            if mode == "hang-call":
                continue
            text = str(message["params"].get("arguments", {}).get("text", ""))
            result = {"content": [{"type": "text", "text": f"echo: {text}"}]}
        elif method == "ping":
            result = {}
        else:
            send({"id": request_id, "error": {"code": -32601, "message": f"no {method}"}})
            continue
        send({"id": request_id, "result": result})


def main() -> None:
    mode = sys.argv[1]
    argument = sys.argv[2] if len(sys.argv) > 2 else None
    ready = sys.argv[3] if len(sys.argv) > 3 else None
    if mode == "exit":
        print("stub: refusing to start", file=sys.stderr)
        raise SystemExit(3)
    if mode == "flaky" and argument is not None and not os.path.exists(argument):
        open(argument, "w", encoding="utf-8").close()
        print("stub: failing the first start", file=sys.stderr)
        raise SystemExit(4)
    serve(mode, argument, ready)


if __name__ == "__main__":
    main()
