"""The command sandbox on macOS: Seatbelt, through `/usr/bin/sandbox-exec` and a generated profile.

The profile expresses the same policy as bubblewrap does on Linux (`agent.sandbox.command_sandbox`):
writes only under the writable places, never to a protected place (existing or not: Seatbelt matches
paths, so no placeholder is needed), and never to a `.git` or `.earshot` component at any depth
inside a root; no read of earshot's own config and data directories (`ProtectedPaths.hidden`); no
look at or signal to processes outside the sandbox (earshot's environment is read through
`ps eww`/`sysctl kern.procargs2`, which is process information); the network cut when the
settings say so.

Paths reach the profile as parameters (`-D NAME=/path`, read with `(param "NAME")`), never as
text inside it, so no path can inject profile syntax; they are canonical (`/tmp` is
`/private/tmp`, `/var/folders/...` is `/private/var/...`), as Seatbelt compares resolved paths.
SBPL gives the last matching rule precedence; the exclusions are written inside one `allow`
with `require-not`, so they hold whatever the order.

earshot cannot run `sandbox-exec` in its CI (Linux): the profile is generated and tested as text.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from agent.sandbox.doors import DOOR_VARIABLES
from agent.sandbox.engine import Launch, Places, SandboxRefused
from agent.tool_env import tool_secret_variables

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
"""Only this one: a `sandbox-exec` earlier on the PATH could be anybody's."""
DEVICES_WRITABLE = ("/dev/null", "/dev/zero", "/dev/dtracehelper", "/dev/tty")
_DEVICE_PATTERNS = (r"^/dev/fd/[0-9]+$", r"^/dev/tty[a-z0-9]*$", r"^/dev/ttys[0-9]+$")
PROTECTED_COMPONENT = r"/\.(git|earshot)(/|$)"
"""A `.git` or `.earshot` path component: refused anywhere inside a root."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatbeltProfile:
    text: str
    parameters: tuple[tuple[str, str], ...]
    """`(name, value)` pairs for `-D name=value`."""

    def arguments(self) -> list[str]:
        arguments = ["-p", self.text]
        for name, value in self.parameters:
            arguments.append(f"-D{name}={value}")
        return arguments


def _real(path: Path) -> str:
    return os.path.realpath(path)


def seatbelt_profile(places: Places) -> SeatbeltProfile:
    """The profile for `places` (see the module docstring)."""
    parameters: list[tuple[str, str]] = []

    def param(prefix: str, path: str) -> str:
        name = f"{prefix}_{sum(1 for known, _ in parameters if known.startswith(prefix + '_'))}"
        parameters.append((name, path))
        return f'(param "{name}")'

    protected = dict.fromkeys(
        _real(path) for path in (*places.protected.paths, *places.protected.lexical)
    )
    exclusions = [f"(require-not (subpath {param('PROTECTED', path)}))" for path in protected]
    exclusions += [
        f"(require-not (require-all (subpath {param('ROOT', _real(root))}) "
        f'(regex #"{PROTECTED_COMPONENT}")))'
        for root in places.protected.roots
    ]
    writable_places = [_real(area) for area in places.writable]
    hidden = [
        f"(deny file-read* (subpath {param('HIDDEN', _real(path))}))"
        for path in places.protected.hidden
        # Not when that would hide a writable place (a workspace inside earshot's config).
        if not any(
            os.path.commonpath([_real(path), area]) == _real(path) for area in writable_places
        )
    ]
    areas = [*places.writable, *([places.temp] if places.temp is not None else [])]
    writable = [
        "  (require-all\n    "
        + "\n    ".join([f"(subpath {param('WRITABLE', _real(area))})", *exclusions])
        + ")"
        for area in areas
    ]
    own_sockets = (
        [f"(allow network-outbound (subpath {param('TEMP', _real(places.temp))}))"]
        if places.temp is not None
        else []
    )
    lines = [
        "(version 1)",
        "(allow default)",
        "",
        "; Writes: only the writable places, never a protected one.",
        "(deny file-write*)",
        "(allow file-write*",
        *writable,
        *(f'  (literal "{device}")' for device in DEVICES_WRITABLE),
        *(f'  (regex #"{pattern}")' for pattern in _DEVICE_PATTERNS),
        ")",
        "",
        "; Processes outside the sandbox (earshot, the editor) can be neither seen nor signalled.",
        "(deny process-info*)",
        "(allow process-info* (target same-sandbox))",
        "(deny signal)",
        "(allow signal (target same-sandbox))",
        "(deny mach-priv-task-port)",
        "",
        "; earshot's own settings (an apiKey) and data (transcripts) cannot be read.",
        *hidden,
        "",
        "; No unix socket of the host: tmux's, the ssh agent's (launchd's, in /private/tmp),",
        "; Docker's. Only the command's own, in its private temp dir.",
        "(deny network-outbound (remote unix-socket))",
        *own_sockets,
    ]
    if places.network:
        lines += [
            "(allow network-outbound "
            '(remote unix-socket (path-literal "/private/var/run/mDNSResponder")))'
        ]
    else:
        lines += [
            "",
            "; No network.",
            "(deny network-outbound (remote ip))",
            "(deny network-inbound (local ip))",
            "(deny network-bind (local ip))",
        ]
    return SeatbeltProfile(text="\n".join(lines) + "\n", parameters=tuple(parameters))


def seatbelt_command(
    places: Places, argv: Sequence[str], *, scrub_env: bool, sandbox_exec: str = SANDBOX_EXEC
) -> list[str]:
    """`env -u DOOR... [-u KEY...] TMPDIR=TEMP /usr/bin/sandbox-exec -p PROFILE -D... -- argv`:
    the variables naming the host's doors (`agent.sandbox.doors`) removed, the provider keys too
    for an inherited environment, and the private temp dir as `$TMPDIR`."""
    command = [shutil.which("env") or "/usr/bin/env"]
    for name in DOOR_VARIABLES:
        command += ["-u", name]
    if scrub_env:
        for name in sorted(tool_secret_variables()):
            command += ["-u", name]
    if places.temp is not None:
        command += [f"{name}={places.temp}" for name in ("TMPDIR", "TMP", "TEMP")]
    command += [sandbox_exec, *seatbelt_profile(places).arguments(), "--", *argv]
    return command


_DENIED = re.compile(r"operation not permitted|sandbox-exec: ", re.IGNORECASE)


class Seatbelt:
    """`agent.sandbox.command_sandbox.Engine` for macOS."""

    name = SANDBOX_EXEC

    async def probe(self, places: Places) -> str | None:
        return None if os.access(SANDBOX_EXEC, os.X_OK) else f"{SANDBOX_EXEC} cannot be run"

    @asynccontextmanager
    async def launch(
        self, places: Places, argv: Sequence[str], *, cwd: Path, scrub_env: bool
    ) -> AsyncGenerator[Launch]:
        del cwd  # the process starts there already
        if not places.writable:
            raise SandboxRefused("nothing would be writable")
        yield Launch(seatbelt_command(places, argv, scrub_env=scrub_env))

    def missing_defences(self, places: Places) -> tuple[str, ...]:
        del places  # the same on every Mac: said in the README ("Security model")
        return ()

    def stopped(self, output: str) -> str | None:
        # Seatbelt refuses with EPERM, which a write outside the writable places gets here.
        if _DENIED.search(output):
            return "the sandbox refused an operation (Operation not permitted)"
        return None


def find_seatbelt() -> Seatbelt | str:
    if not os.path.exists(SANDBOX_EXEC):
        return f"{SANDBOX_EXEC} is missing"
    return Seatbelt()
