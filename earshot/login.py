"""`earshot login`: set a provider's API key from a terminal, and whether one is set at all.

Editors that can run an agent in a terminal to sign in (ACP terminal auth: Zed) are offered
this as earshot's one authentication method (`acp_server.advertised`), and only while no key is
found: the old "API key from environment" method made Zed call a no-op `authenticate` and stay
on its sign-in screen. The editor runs earshot's own command with `login` appended
(`earshot --stdio login`, `earshot acp login`) or, through Zed's older `_meta["terminal-auth"]`,
`python -m earshot login`; the CLI routes all of them here.

The key is read without echo and written to the user settings file (`providers.<id>.apiKey`),
created with mode 0600; a settings file others can read is refused, as `providers/set` refuses
headers. The key is never printed or logged.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    from pathlib import Path

_KEY_VARIABLE = re.compile(r"[A-Z][A-Z0-9_]*_(?:API_KEY|AUTH_TOKEN|API_TOKEN)")
"""What a provider key variable looks like (`ANTHROPIC_API_KEY`, `GEMINI_API_KEY`,
`ANTHROPIC_AUTH_TOKEN`...): matched by name, so that answering `initialize` imports no provider
table (a guess that errs towards "found": a session that then lacks a key says which to set)."""

MAIN_PROVIDERS = ("anthropic", "openai", "google", "openrouter")
"""Offered by number; any other built-in provider is typed by its id."""


def credentials_found(environ: Mapping[str, str]) -> bool:
    """Whether a provider key seems to be set: a key variable in the environment, or a key in
    the user settings (`apiKey`, or an `apiKeyEnv` that is set). Stdlib only: it runs while
    `initialize` is answered."""
    if any(_KEY_VARIABLE.fullmatch(name) and value for name, value in environ.items()):
        return True
    try:
        with open(_settings_path(environ), encoding="utf-8") as file:
            data: object = json.load(file)
    except (OSError, ValueError):
        return False
    providers = cast("dict[str, object]", data).get("providers") if isinstance(data, dict) else None
    if not isinstance(providers, dict):
        return False
    for entry in cast("dict[str, object]", providers).values():
        if not isinstance(entry, dict):
            continue
        fields = cast("dict[str, object]", entry)
        named = fields.get("apiKeyEnv")
        if fields.get("enabled") is not False and (
            fields.get("apiKey") or (isinstance(named, str) and environ.get(named))
        ):
            return True
    return False


def user_settings_file(environ: Mapping[str, str]) -> Path:
    """`$XDG_CONFIG_HOME/earshot/settings.json` (as `agent.settings.scopes.settings_paths` says)."""
    from pathlib import Path

    return Path(_settings_path(environ))


def _settings_path(environ: Mapping[str, str]) -> str:
    """`user_settings_file` without pathlib, which `initialize` does not wait for (its import
    is ~15M instructions, more than the rest of the answer to a client offered sign-in)."""
    xdg = environ.get("XDG_CONFIG_HOME", "")
    home = environ.get("HOME") or os.path.expanduser("~")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(home, ".config")
    return os.path.join(base, "earshot", "settings.json")


def run_login(
    *,
    environ: Mapping[str, str],
    stdin: TextIO,
    out: TextIO,
    read_secret: Callable[[str], str],
) -> int:
    """Ask which provider and its key, save the key; 0 when saved."""
    from providers.registry import all_providers, provider_spec

    if not stdin.isatty():
        out.write(
            "earshot login asks for a key: run it in a terminal, or set the provider's key "
            "variable (ANTHROPIC_API_KEY, OPENAI_API_KEY...) where your editor starts earshot.\n"
        )
        return 2
    out.write("Which provider's API key do you want to set?\n")
    for number, provider_id in enumerate(MAIN_PROVIDERS, start=1):
        spec = provider_spec(provider_id)
        out.write(f"  {number}. {spec.name if spec else provider_id}\n")
    others = [spec.id for spec in all_providers() if spec.key_required and spec.env]
    out.write(f"  or type another provider's id ({', '.join(others[4:12])}, ...)\n> ")
    out.flush()
    answer = stdin.readline().strip()
    chosen = MAIN_PROVIDERS[int(answer) - 1] if answer in ("1", "2", "3", "4") else answer
    spec = provider_spec(chosen)
    if spec is None or not spec.env:
        out.write(f"earshot: no provider {chosen!r} takes an API key (see `earshot models`)\n")
        return 2
    key = read_secret(f"{spec.name} API key (not shown as you type): ").strip()
    if not key:
        out.write("Nothing saved.\n")
        return 1
    path = user_settings_file(environ)
    problem = save_key(path, spec.id, key)
    if problem is not None:
        out.write(f"earshot: {problem}\n")
        return 1
    out.write(
        f"Saved the {spec.name} key in {path} (readable by you only). Your editor can start a "
        "session now.\n"
    )
    return 0


def save_key(path: Path, provider_id: str, key: str) -> str | None:
    """Write `providers.<provider_id>.apiKey` to the user settings; why not, or None."""
    from agent.settings import SettingsError
    from agent.settings.edits import rewrite_settings
    from earshot.provider_admin import PRIVATE_MODE

    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0
    if mode & 0o077:
        return (
            f"your settings file {path} can be read by others (mode {mode:04o}): run `chmod 600 "
            f"{path}` and try again, or set the key in an environment variable instead"
        )

    def edit(data: dict[str, Any]) -> None:
        providers = cast("dict[str, Any]", data.setdefault("providers", {}))
        entry = providers.get(provider_id)
        providers[provider_id] = {
            **(cast("dict[str, Any]", entry) if isinstance(entry, dict) else {}),
            "apiKey": key,
        }

    try:
        rewrite_settings(path, "user", edit, new_mode=PRIVATE_MODE)
    except SettingsError as error:
        return str(error)
    except OSError as error:
        return f"cannot write {path}: {error.strerror}"
    return None


__all__ = ["credentials_found", "run_login", "save_key", "user_settings_file"]
