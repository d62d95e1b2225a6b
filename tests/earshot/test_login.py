"""`earshot login` as an editor's terminal sign-in runs it (issue 31.10): the editor's own
command with `login` appended, in a real terminal (a pty): the key is asked without echo, saved
in the user settings with mode 600, and never shown; without a terminal it says what to do."""

from __future__ import annotations

import json
import os
import pty
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.earshot.support import Env, earshot, make_env

KEY = "sk-test-login-0123456789"


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def _in_a_terminal(env: Env, *args: str, typed: list[str]) -> tuple[int, str]:
    """Run `python -m earshot ARGS` on a pty, typing each of `typed` once the process asks."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "earshot", *args],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=env.workspace,
        env=env.environ(),
        start_new_session=True,  # the pty is its controlling terminal (getpass opens /dev/tty)
    )
    os.close(terminal)
    shown = b""
    prompts = ("> ", "not shown as you type): ")
    remaining = list(typed)
    try:
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the process ended: EIO on the pty
                break
            if not chunk:
                break
            shown += chunk
            if remaining and shown.decode(errors="replace").rstrip(" ").endswith(
                tuple(p.rstrip(" ") for p in prompts)
            ):
                os.write(controller, remaining.pop(0).encode() + b"\n")
        code = process.wait(timeout=60)
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
    return code, shown.decode(errors="replace")


def test_login_saves_the_key_privately_and_never_shows_it(env: Env) -> None:
    code, shown = _in_a_terminal(env, "--stdio", "login", typed=["1", KEY])
    assert code == 0, shown
    settings = env.config_home / "earshot" / "settings.json"
    assert json.loads(settings.read_text(encoding="utf-8"))["providers"]["anthropic"] == {
        "apiKey": KEY
    }
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert KEY not in shown  # not echoed, not printed
    assert "Saved the Anthropic key" in shown


async def test_login_without_a_terminal_says_what_to_do(env: Env) -> None:
    run = await earshot(env, "login")
    assert run.code == 2 and "run it in a terminal" in run.stdout
    assert not (env.config_home / "earshot" / "settings.json").exists()


def test_a_settings_file_others_can_read_is_not_given_a_key(env: Env) -> None:
    settings = env.write_settings({"model": "anthropic/claude-sonnet-4-5"})
    settings.chmod(0o644)
    code, shown = _in_a_terminal(env, "acp", "login", typed=["openai", KEY])
    assert code == 1 and "chmod 600" in shown
    assert KEY not in settings.read_text(encoding="utf-8")
