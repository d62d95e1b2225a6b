"""A scripted language server for the LSP client's edge cases (stdlib only, starts fast).

    python lsp_fake_server.py MODE [DELAY]

Every line containing `BROKEN` gets an error diagnostic ("broken line", code `B1`), every line
containing `SHAKY` a warning. MODE:

- `push`: publishes diagnostics (with the document version) after each open and change;
- `pull`: announces a `diagnosticProvider` and answers `textDocument/diagnostic`;
- `unversioned`: publishes without a version;
- `slow`: publishes DELAY seconds after each change (a thread, so it still answers shutdown);
- `silent`: never publishes;
- `crash`: like `push`, but writes to stderr and exits with code 3 on the first change;
- `dead`: exits with code 5 before answering `initialize`;
- `garbage`: like `push`, but answers the first change with bytes that are not an LSP frame.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

MODE = sys.argv[1]
DELAY = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
_write_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    with _write_lock:
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        sys.stdout.buffer.flush()


def receive() -> dict[str, Any] | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def diagnostics(text: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines()):
        for marker, severity, message in (("BROKEN", 1, "broken line"), ("SHAKY", 2, "shaky")):
            column = line.find(marker)
            if column >= 0:
                found.append(
                    {
                        "range": {
                            "start": {"line": number, "character": column},
                            "end": {"line": number, "character": column + len(marker)},
                        },
                        "severity": severity,
                        "code": "B1" if severity == 1 else "S1",
                        "source": "fake",
                        "message": message,
                    }
                )
    return found


def publish(uri: str, version: int, text: str) -> None:
    params: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics(text)}
    if MODE != "unversioned":
        params["version"] = version
    send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})


def main() -> None:
    documents: dict[str, str] = {}
    while True:
        message = receive()
        if message is None:
            return
        method = message.get("method")
        params: Any = message.get("params") or {}
        if method == "initialize":
            if MODE == "dead":
                sys.stderr.write("fake: cannot start\n")
                sys.exit(5)
            capabilities: dict[str, Any] = {"textDocumentSync": 1}
            if MODE == "pull":
                capabilities["diagnosticProvider"] = {
                    "interFileDependencies": False,
                    "workspaceDiagnostics": False,
                }
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": capabilities}})
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "exit":
            return
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            if method == "textDocument/didOpen":
                document = params["textDocument"]
                uri, version, text = document["uri"], document["version"], document["text"]
            else:
                if MODE == "garbage":
                    sys.stdout.buffer.write(b"Content-Length: nonsense\r\n\r\n{{{")
                    sys.stdout.buffer.flush()
                if MODE == "crash":
                    sys.stderr.write("fake: internal error, giving up\n")
                    sys.stderr.flush()
                    sys.exit(3)
                uri = params["textDocument"]["uri"]
                version = params["textDocument"]["version"]
                text = params["contentChanges"][-1]["text"]
            documents[uri] = text
            if MODE in ("push", "unversioned", "garbage", "crash"):
                publish(uri, version, text)
            elif MODE == "slow":
                timer = threading.Timer(DELAY, publish, (uri, version, text))
                timer.daemon = True
                timer.start()
        elif method == "textDocument/diagnostic":
            uri = params["textDocument"]["uri"]
            items = diagnostics(documents.get(uri, ""))
            send(
                {"jsonrpc": "2.0", "id": message["id"], "result": {"kind": "full", "items": items}}
            )


if __name__ == "__main__":
    main()
