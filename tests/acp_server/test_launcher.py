"""The launcher an editor terminal starts for a confined command (`write_launcher`): a private
script that runs the command line it holds, whatever the editor shows or passes, and removes
itself."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from acp_server.client_io import write_launcher


def test_the_launcher_runs_what_it_holds_and_removes_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    marker = tmp_path / "ran"
    held = [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('it ran\\n')"]
    launcher = write_launcher(held, "the user's command")
    script = Path(launcher.argv[0])
    assert launcher.argv == [str(script), "the user's command"]
    assert script.parent == launcher.directory
    assert launcher.directory.parent == tmp_path / "data" / "earshot" / "launchers"
    assert stat.S_IMODE(launcher.directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(script.stat().st_mode) == 0o700
    # An editor may pass anything as its argument: what runs is what it holds.
    done = subprocess.run([str(script), "rm -rf ~"], check=False, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert marker.read_text(encoding="utf-8") == "it ran\n"
    assert not launcher.directory.exists()
    launcher.remove()  # idempotent


def test_the_launcher_quotes_every_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    command = "printf '%s|' \"$HOME\" `id` $(id) '\n' ; echo done"
    launcher = write_launcher(["bash", "-c", command], command)
    env = {**os.environ, "HOME": "/home/someone"}
    done = subprocess.run(launcher.argv, check=False, capture_output=True, text=True, env=env)
    expected = subprocess.run(
        ["bash", "-c", command], check=False, capture_output=True, text=True, env=env
    )
    assert done.stdout == expected.stdout and "done" in done.stdout
