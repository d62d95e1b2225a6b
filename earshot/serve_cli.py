"""`earshot serve`: ACP over WebSocket (`acp_server.websocket`), for a client on another machine
(through an SSH forward) or a browser UI.

The token is generated for the run and printed on stderr, unless `--token-file` names a file
holding one (the first line; a file others can read is refused, as ssh refuses such a key).
"""

from __future__ import annotations

import secrets
import stat
import sys
from pathlib import Path
from typing import TextIO

DEFAULT_PORT = 8765


class TokenFileError(Exception):
    """The token file is missing, empty, or readable by others."""


def read_token_file(path: Path) -> str:
    """The token in `path` (its first line, stripped).

    Raises:
        TokenFileError: the file cannot be read, is empty, or group/other may read it.
    """
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TokenFileError(f"cannot read the token file {path}: {exc.strerror}") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenFileError(
            f"the token file {path} is readable by other users: run `chmod 600 {path}`"
        )
    token = text.strip().splitlines()[0].strip() if text.strip() else ""
    if not token:
        raise TokenFileError(f"the token file {path} is empty")
    return token


def run_serve(*, host: str, port: int, token_file: str | None, err: TextIO = sys.stderr) -> int:
    """Serve until Ctrl-C or SIGTERM. Exit status 2 for a bad token file or an address that
    cannot be bound, 130 after Ctrl-C."""
    from acp_server.interrupt import INTERRUPTED, exit_on_interrupt, run_interruptible

    exit_on_interrupt()
    from acp_server.log import install
    from acp_server.websocket import LOOPBACK_HOSTS, ServeOptions, serve_websocket
    from earshot import __version__
    from earshot.acp_main import earshot_ports

    try:
        token = read_token_file(Path(token_file)) if token_file else secrets.token_urlsafe(32)
    except TokenFileError as exc:
        print(f"earshot serve: {exc}", file=err)
        return 2
    install()
    if host not in LOOPBACK_HOSTS:
        print(
            f"earshot serve: listening on {host}, not loopback: the token is the only protection "
            "and ws:// is not encrypted; prefer the default with an SSH forward",
            file=err,
        )

    def listening(bound_host: str, bound_port: int) -> None:
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        print(f"earshot serve: ACP over WebSocket on ws://{shown}:{bound_port}/", file=err)
        if token_file:
            print(f"earshot serve: token from {token_file}", file=err)
        else:
            print(f"earshot serve: token {token} (send `Authorization: Bearer <token>`)", file=err)
        err.flush()

    options = ServeOptions(host=host, port=port, token=token)
    try:
        interrupted = run_interruptible(
            lambda: serve_websocket(
                options, ports=earshot_ports, version=__version__, on_listening=listening
            )
        )
    except OSError as exc:
        print(f"earshot serve: cannot listen on {host}:{port}: {exc.strerror or exc}", file=err)
        return 2
    return INTERRUPTED if interrupted else 0
