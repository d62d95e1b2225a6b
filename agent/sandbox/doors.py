"""The host's doors a sandboxed command must not find: the variables that point at services which
would act for it outside the sandbox, and the unix sockets those services listen on.

A unix socket is a door out of any file-system sandbox: connecting to one needs no write access
(a read-only mount does not stop it), and the program behind it runs outside. `tmux run-shell`
through `/tmp/tmux-UID/default`, `ssh-add -D` or a signature through `$SSH_AUTH_SOCK`,
`systemd-run --user` through the D-Bus session bus, `docker run -v /:/host`, `nvim --server
$NVIM --remote-send`, `kitty @ launch`, `zellij action write-chars`, X11 and Wayland clients
typing into other windows: each runs what the command asks, unconfined. So the sandbox engines
(`agent.sandbox.linux`, `agent.sandbox.macos`) remove the variables below from the command's
environment and hide the sockets themselves:

- the variables (`DOOR_VARIABLES`): without them most clients do not know where to look, and a
  value left behind would name a socket the sandbox hides anyway;
- the sockets: on Linux, every path socket bound in the host's network namespace when the
  command starts (`/proc/net/unix`, `bound_sockets`), outside the places hidden or replaced
  wholesale (the private `/tmp`, the runtime dir), is covered with `/dev/null`; abstract
  sockets are cut by the network namespace of the sandbox's own (`agent.sandbox.network`).
  On macOS the Seatbelt profile refuses connecting to any unix socket but the command's own.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping

DOOR_VARIABLES = (
    # Agents and keyrings.
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
    # Terminal multiplexers and terminals with remote control.
    "TMUX",
    "TMUX_PANE",
    "STY",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "ZELLIJ_PANE_ID",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "ALACRITTY_SOCKET",
    # Editors with a server.
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "EMACS_SOCKET_NAME",
    # Session services and displays.
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "DISPLAY",
    "XAUTHORITY",
    "WAYLAND_DISPLAY",
    "WAYLAND_SOCKET",
    "SWAYSOCK",
    "I3SOCK",
    "HYPRLAND_INSTANCE_SIGNATURE",
    "NIRI_SOCKET",
    "PULSE_SERVER",
    "PIPEWIRE_REMOTE",
    # Container engines.
    "DOCKER_HOST",
    "CONTAINER_HOST",
)
"""Removed from every sandboxed command's environment."""

SERVICE_PLACES = (
    "/run/user/{uid}",
    "/run/dbus",
    "/run/systemd/private",
    "/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/screen",
    "/run/tmux",
)
"""Hidden when they exist (`{uid}` is the user's): the runtime dir holds the session bus, the
keyring, Wayland, PipeWire, the ssh and gpg agents and the editors' sockets; `/run/screen` may
hold FIFOs (which `/proc/net/unix` does not list). `/var/run` is a link to `/run`."""

UNIX_TABLE = "/proc/net/unix"


def service_places(environ: Mapping[str, str]) -> list[str]:
    """The service directories and sockets to hide, from the fixed list and the environment
    (`$XDG_RUNTIME_DIR`, an absolute `$WAYLAND_DISPLAY`, `$SSH_AUTH_SOCK`), resolved."""
    uid = str(os.getuid())
    names = [name.replace("{uid}", uid) for name in SERVICE_PLACES]
    for variable in ("XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "SSH_AUTH_SOCK"):
        value = environ.get(variable, "")
        if value.startswith("/"):
            names.append(value)
    tmux = environ.get("TMUX_TMPDIR", "")
    if tmux.startswith("/"):
        names.append(f"{tmux}/tmux-{uid}")
    return [os.path.realpath(name) for name in names]


def bound_sockets(skip: Iterable[str], *, table: str = UNIX_TABLE) -> list[str]:
    """The path sockets bound in this network namespace (`/proc/net/unix`), as they exist now
    (a socket file, not a leftover name), except those under `skip` (absolute, normalised)."""
    try:
        with open(table, "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    prefixes = tuple(path.rstrip("/") + "/" for path in skip)
    found: dict[str, None] = {}
    for line in data.split(b"\n")[1:]:
        # Num RefCount Protocol Flags Type St Inode Path: the path may hold spaces.
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith(b"/"):
            continue  # unnamed, or abstract (`@name`: the network namespace cuts those)
        path = os.fsdecode(fields[7])
        if path in found or path.startswith(prefixes):
            continue
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        found[path] = None
    return list(found)


__all__ = ["DOOR_VARIABLES", "SERVICE_PLACES", "bound_sockets", "service_places"]
