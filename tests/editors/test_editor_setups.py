"""Each editor setup in editors/ names the real CLI: its command and arguments are parsed out of the
snippet and then actually spawned, and the process must answer an ACP `initialize`."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

EDITORS = Path(__file__).resolve().parents[2] / "editors"


def _lua_strings(block: str) -> list[str]:
    return re.findall(r'"([^"]*)"', block)


def zed() -> tuple[str, list[str]]:
    entry = json.loads((EDITORS / "zed" / "settings.json").read_text(encoding="utf-8"))[
        "agent_servers"
    ]["earshot"]
    assert entry["type"] == "custom"
    assert os.path.isabs(entry["command"])
    return entry["command"], entry["args"]


def jetbrains() -> tuple[str, list[str]]:
    entry = json.loads((EDITORS / "jetbrains" / "acp.json").read_text(encoding="utf-8"))[
        "agent_servers"
    ]["earshot"]
    assert os.path.isabs(entry["command"])
    return entry["command"], entry["args"]


def codecompanion() -> tuple[str, list[str]]:
    text = (EDITORS / "neovim" / "codecompanion.lua").read_text(encoding="utf-8")
    match = re.search(r"commands\s*=\s*\{\s*default\s*=\s*\{([^}]*)\}", text)
    assert match, "no commands.default in codecompanion.lua"
    assert 'extend("goose"' in text
    command, *args = _lua_strings(match.group(1))
    return command, args


def avante() -> tuple[str, list[str]]:
    text = (EDITORS / "neovim" / "avante.lua").read_text(encoding="utf-8")
    command = re.search(r'command\s*=\s*"([^"]+)"', text)
    args = re.search(r"args\s*=\s*\{([^}]*)\}", text)
    assert command and args
    assert re.search(r'provider\s*=\s*"earshot"', text)
    return command.group(1), _lua_strings(args.group(1))


def agent_shell() -> tuple[str, list[str]]:
    text = (EDITORS / "emacs" / "agent-shell.el").read_text(encoding="utf-8")
    command = re.search(r':command\s+"([^"]+)"', text)
    params = re.search(r":command-params\s+'\(([^)]*)\)", text)
    assert command and params
    assert text.count("(") == text.count(")"), "unbalanced parentheses"
    return command.group(1), re.findall(r'"([^"]*)"', params.group(1))


def toad() -> tuple[str, list[str]]:
    data = tomllib.loads((EDITORS / "toad" / "earshot.toml").read_text(encoding="utf-8"))
    assert data["protocol"] == "acp"
    command, *args = shlex.split(data["run_command"]["*"])
    return command, args


SETUPS = {
    "zed": zed,
    "jetbrains": jetbrains,
    "codecompanion": codecompanion,
    "avante": avante,
    "agent-shell": agent_shell,
    "toad": toad,
}


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_setup_names_the_real_cli_and_it_answers_initialize(name: str, tmp_path: Path) -> None:
    command, args = SETUPS[name]()
    assert Path(command).name == "earshot"
    earshot = Path(sys.executable).parent / "earshot"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    done = subprocess.run(
        [str(earshot), *args],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    first_line = done.stdout.splitlines()[0] if done.stdout else ""
    reply = json.loads(first_line)
    assert reply["id"] == 1
    assert reply["result"]["protocolVersion"] == 1
    assert reply["result"]["agentInfo"]["name"] == "earshot"


def test_every_editor_folder_has_a_readme() -> None:
    for folder in EDITORS.iterdir():
        if folder.is_dir():
            assert (folder / "README.md").is_file(), folder
