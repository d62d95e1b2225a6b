"""The user's home directory opened as the workspace (issue 24, item 6), through print mode in
`auto` with the real sandbox: the shell files Debian, Fedora and macOS source, the autostart
places and the credential files are protected, so a redirection the gate can read asks (print
mode cannot ask: refused), and a program that writes them by itself is stopped by the sandbox.
Ordinary work in the home directory still runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.earshot.support import Env, earshot, make_env

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="commands run in the real sandbox"
)

ASKED = {
    "bash_aliases": "echo 'alias ls=\"touch pwned\"' >> ~/.bash_aliases",
    "bashrc_d": "mkdir -p ~/.bashrc.d && echo 'touch pwned' > ~/.bashrc.d/evil.sh",
    "zshenv": "echo 'touch pwned' >> ~/.zshenv",
    "systemd_unit": "echo '[Service]' > ~/.config/systemd/user/evil.service",
    "authorized_keys": "echo 'ssh-ed25519 AAAA attacker' >> ~/.ssh/authorized_keys",
}
"""Redirections the gate reads: each asks, and print mode refuses."""
STOPPED = {
    "autostart": "~/.config/autostart/evil.desktop",
    "fish": "~/.config/fish/conf.d/evil.fish",
    "path_hijack": "~/.local/bin/git",
    "gitconfig": "~/.gitconfig",
    "bash_login": "~/.bash_login",
}
"""Files a program writes by itself (no parser sees them): the sandbox keeps them read-only."""
CONTROL = "echo ok > notes.txt && git init -q repo && git -C repo status --short"


def _python_write(path: str) -> str:
    code = (
        "import os, sys; p = os.path.expanduser(sys.argv[1]); "
        "os.makedirs(os.path.dirname(p), exist_ok=True); open(p, 'w').write('touch pwned')"
    )
    return f'python3 -c "{code}" {path}'


def _script(env: Env, commands: list[str]) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"id": f"c{n}", "name": "bash", "arguments": {"command": command}}]}
        for n, command in enumerate(commands)
    ]
    turns.append({"text": "done"})
    script = env.root / "script.json"
    script.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    env.write_settings(
        {"providers": {"fake": {"api": "scripted", "script": str(script)}}, "model": "fake/x"}
    )


@pytest.fixture
def env(tmp_path: Path) -> Env:
    where = make_env(tmp_path)
    (where.home / ".bashrc").write_text("[ -f ~/.bash_aliases ] && . ~/.bash_aliases\n")
    for directory in (".ssh", ".config/systemd/user"):
        (where.home / directory).mkdir(parents=True)
    return where


async def test_a_model_cannot_plant_start_up_code_in_a_home_workspace(env: Env) -> None:
    _script(env, [*ASKED.values(), *map(_python_write, STOPPED.values()), CONTROL])
    run = await earshot(env, "--cwd", str(env.home), "--permission-mode", "auto", "-p", "go")
    assert run.code == 3, run.stderr  # refused calls
    planted = [
        path
        for path in (
            ".bash_aliases",
            ".bashrc.d",
            ".zshenv",
            ".config/systemd/user/evil.service",
            ".ssh/authorized_keys",
            *(target.removeprefix("~/") for target in STOPPED.values()),
        )
        if (env.home / path).exists()
    ]
    assert planted == [], run.stderr
    assert run.stderr.count("permission refused") == len(ASKED), run.stderr
    # The control: ordinary work in the home directory runs, confined (git reads the missing
    # ~/.gitconfig as an empty file).
    assert (env.home / "notes.txt").read_text() == "ok\n"
    assert (env.home / "repo" / ".git").is_dir()
