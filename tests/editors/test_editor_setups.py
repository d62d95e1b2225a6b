"""Each editor setup in editors/ is checked against what its editor actually reads, and names the
real CLI: its command and arguments are parsed out of the file and spawned, and the process must
answer an ACP `initialize`.

What each editor reads (from the editors' own sources):
- Toad: `src/toad/agent_schema.py` (batrachianai/toad), the `Agent` TypedDict; Toad 0.6.20 reads
  agent files only from its package data, `toad.data/agents/*.toml` (`toad/agents.py::
  read_agents`), and its store screen
  indexes `author_name`, `description`, `type`..., the agent modal `help` and `actions`, so a
  missing key is a KeyError on Toad's home screen.
- Zed: `crates/settings_content/src/agent.rs` (zed-industries/zed),
  `CustomAgentServerSettings::Custom`, a serde enum tagged by `"type"`.
- JetBrains: `~/.jetbrains/acp.json`, `agent_servers.<name>.{command,args,env}` (AI Assistant's
  ACP documentation).
- agent-shell: `agent-shell-make-agent-config` and `agent-shell--make-acp-client`
  (xenodium/agent-shell).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

EDITORS = Path(__file__).resolve().parents[2] / "editors"
DATA = Path(__file__).resolve().parents[1] / "data"
EMACS_FILE = EDITORS / "emacs" / "earshot-agent-shell.el"

# Toad's `Agent` TypedDict: every key that is not `NotRequired` (active, recommended, welcome
# are optional), with the type Toad expects.
TOAD_REQUIRED: dict[str, type] = {
    "identity": str,
    "name": str,
    "short_name": str,
    "url": str,
    "protocol": str,
    "type": str,
    "author_name": str,
    "author_url": str,
    "publisher_name": str,
    "publisher_url": str,
    "description": str,
    "tags": list,
    "help": str,
    "run_command": dict,
    "actions": dict,
}
TOAD_OPTIONAL = {"active", "recommended", "welcome"}
TOAD_OSES = {"macos", "linux", "windows", "*"}
# Zed's `CustomAgentServerSettings::Custom` fields (the serde tag `type` aside).
ZED_CUSTOM_FIELDS: dict[str, type] = {
    "command": str,
    "args": list,
    "env": dict,
    "default_mode": str,
    "default_model": str,
    "favorite_models": list,
    "default_config_options": dict,
    "favorite_config_option_values": dict,
}
NOT_ON_AN_INDEX = r"earshot-agent(?![-\w])"
"""The distribution name, which no package index has: installing it by name fails."""
EARSHOT_MODES = {"plan", "ask", "accept-edits", "auto", "yolo"}


def _lua_strings(block: str) -> list[str]:
    return re.findall(r'"([^"]*)"', block)


def _zed_entry() -> dict[str, Any]:
    return json.loads((EDITORS / "zed" / "settings.json").read_text(encoding="utf-8"))[
        "agent_servers"
    ]["earshot"]


def _toad_file() -> dict[str, Any]:
    return tomllib.loads((EDITORS / "toad" / "earshot.toml").read_text(encoding="utf-8"))


def zed() -> tuple[str, list[str]]:
    entry = _zed_entry()
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
    text = EMACS_FILE.read_text(encoding="utf-8")
    default = re.search(r"\(defcustom earshot-agent-shell-command '\(([^)]*)\)", text)
    assert default, "no earshot-agent-shell-command default"
    command, *args = re.findall(r'"([^"]*)"', default.group(1))
    assert ":command (car earshot-agent-shell-command)" in text
    assert ":command-params (cdr earshot-agent-shell-command)" in text
    return command, args


def toad() -> tuple[str, list[str]]:
    data = _toad_file()
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


# ------------------------------------------------------------------------------------- Toad


def test_toad_agent_file_has_every_key_toad_reads_with_its_type() -> None:
    data = _toad_file()
    missing = sorted(set(TOAD_REQUIRED) - set(data))
    assert missing == [], f"Toad raises KeyError for {missing}"
    for key, expected in TOAD_REQUIRED.items():
        assert isinstance(data[key], expected), key
    assert set(data) <= set(TOAD_REQUIRED) | TOAD_OPTIONAL
    assert data["protocol"] == "acp"
    assert data["type"] in {"coding", "chat"}
    assert all(isinstance(tag, str) for tag in data["tags"])
    assert data["help"].strip()
    assert set(data["run_command"]) <= TOAD_OSES
    assert all(isinstance(command, str) for command in data["run_command"].values())


def test_toad_actions_are_commands_that_work_today() -> None:
    actions: dict[str, dict[str, dict[str, Any]]] = _toad_file()["actions"]
    assert set(actions) <= TOAD_OSES
    commands: list[str] = []
    for by_action in actions.values():
        for action in by_action.values():
            # Toad's `Command`: description and command required, bootstrap_uv optional.
            assert isinstance(action["description"], str) and action["description"]
            assert isinstance(action["command"], str)
            assert set(action) <= {"description", "command", "bootstrap_uv"}
            commands.append(action["command"])
    assert commands, "an install action"
    for command in commands:
        # earshot is on no package index: only an install from a checkout works.
        assert not re.search(NOT_ON_AN_INDEX, command)
        assert re.match(r"(uv tool install|pipx install) ", command), command
        if command.startswith("uv "):
            assert actions["*"]["install"].get("bootstrap_uv") is True


def test_toad_readme_says_what_toad_reads() -> None:
    """Issue 26.4: Toad 0.6.20 reads agents only from its package data
    (`toad/agents.py::read_agents`, recorded in tests/data/clients/toad-0.6.20.json): the README
    says so, and what works without it; it no longer sends the file to ~/.config/toad/agents."""
    readme = (EDITORS / "toad" / "README.md").read_text(encoding="utf-8")
    recorded = json.loads((DATA / "clients" / "toad-0.6.20.json").read_text(encoding="utf-8"))
    assert recorded["agents"]["reads"] == "toad.data/agents/*.toml (package data only)"
    assert 'toad acp "earshot --stdio"' in readme
    assert "toad/data/agents/" in readme
    assert "does not read `~/.config/toad/agents/`" in readme
    assert not re.search(r"cp [^\n]*\$\{XDG_CONFIG_HOME", readme)


# -------------------------------------------------------------------------------------- Zed


def test_zed_entry_uses_only_fields_zed_reads() -> None:
    entry = _zed_entry()
    assert entry["type"] == "custom", "Zed ignores an agent_servers entry without type custom"
    fields = {key: value for key, value in entry.items() if key != "type"}
    assert set(fields) <= set(ZED_CUSTOM_FIELDS), "Zed ignores unknown fields silently"
    for key, value in fields.items():
        assert isinstance(value, ZED_CUSTOM_FIELDS[key]), key
    assert all(isinstance(arg, str) for arg in entry["args"])
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in entry["env"].items())
    # Zed ignores `default_mode` for an agent that sends config options (earshot does): the
    # mode is preselected through `default_config_options` (issue 31.11).
    assert "default_mode" not in entry
    options = entry.get("default_config_options", {})
    assert set(options) <= {"mode", "model", "thought_level"}
    assert options.get("mode", "ask") in EARSHOT_MODES
    for value in options.values():
        assert isinstance(value, str)


def test_jetbrains_entry_has_the_documented_shape() -> None:
    data = json.loads((EDITORS / "jetbrains" / "acp.json").read_text(encoding="utf-8"))
    assert set(data) == {"agent_servers"}
    for entry in data["agent_servers"].values():
        assert set(entry) <= {"command", "args", "env", "use_idea_mcp", "use_custom_mcp"}
        assert isinstance(entry["command"], str)
        assert all(isinstance(arg, str) for arg in entry["args"])
        assert all(isinstance(v, str) for v in entry.get("env", {}).values())


# ------------------------------------------------------------------------------------ Emacs


def _emacs_features(text: str) -> tuple[set[str], set[str]]:
    text = "\n".join(line.split(";", 1)[0] for line in text.splitlines())  # code, not comments
    required = set(re.findall(r"\(require '([\w-]+)\)", text))
    provided = set(re.findall(r"\(provide '([\w-]+)\)", text))
    return required, provided


def test_emacs_file_provides_its_own_name_and_never_shadows_agent_shell() -> None:
    folder = EMACS_FILE.parent
    assert not (folder / "agent-shell.el").exists(), (
        "a file named agent-shell.el on load-path makes (require 'agent-shell) recursive"
    )
    for path in folder.glob("*.el"):
        required, provided = _emacs_features(path.read_text(encoding="utf-8"))
        assert provided == {path.stem}, f"{path.name} must provide the feature {path.stem}"
        assert path.stem not in required
        # A required feature of the same name as a file here would load that file instead.
        assert not {f"{feature}.el" for feature in required} & {p.name for p in folder.iterdir()}


FAKE_AGENT_SHELL = """
;;; agent-shell.el --- stand-in: the agent registry of 0.74 -*- lexical-binding: t; -*-
;; `agent-shell-agent-configs' is a list of maker functions or alists, or a function returning
;; such a list; `agent-shell--resolved-agent-configs' realizes it (xenodium/agent-shell,
;; agent-shell.el 0.74.3; tests/data/clients/agent-shell.json). A `legacy' stand-in leaves the
;; resolver out: entries were alists only.
(require 'cl-lib)
(defvar agent-shell-agent-configs (list (lambda () (list :identifier 'claude-code))))
(cl-defun agent-shell-make-agent-config (&rest args) args)
(cl-defun agent-shell--make-acp-client (&rest args) args)
(unless (getenv "EARSHOT_TEST_LEGACY_AGENT_SHELL")
  (defun agent-shell--resolved-agent-configs ()
    (mapcar (lambda (entry) (if (functionp entry) (funcall entry) entry))
            (if (functionp agent-shell-agent-configs)
                (funcall agent-shell-agent-configs)
              agent-shell-agent-configs))))
(provide 'agent-shell)
"""

EMACS_PROBE = """
(progn
  (require 'json)
  (setq load-path (append (list %(stand_in)s %(folder)s) load-path))
  %(before)s
  (require 'earshot-agent-shell)
  (let* ((configs (if (fboundp 'agent-shell--resolved-agent-configs)
                      (agent-shell--resolved-agent-configs)
                    agent-shell-agent-configs))
         (ids (mapcar (lambda (c) (plist-get c :identifier)) configs))
         (config (seq-find (lambda (c) (eq (plist-get c :identifier) 'earshot)) configs))
         (client (funcall (plist-get config :client-maker) 'buffer)))
    (princ (json-encode (list (cons 'identifiers (vconcat ids))
                              (cons 'command (plist-get client :command))
                              (cons 'params (plist-get client :command-params)))))))
"""


def _emacs_run(emacs: str, script: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [emacs, "--batch", "-Q", "--eval", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_emacs_file_byte_compiles_cleanly_and_registers_earshot(tmp_path: Path) -> None:
    """Issue 26.18: the file byte-compiled with a warning, and did nothing when
    `agent-shell-agent-configs' was a function. It byte-compiles with warnings as errors and
    follows agent-shell's maker convention, with a function value and with the older list of
    alists alike."""
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs is not installed: the Emacs Lisp checks need it")
    stand_in = tmp_path / "stand-in"
    stand_in.mkdir()
    (stand_in / "agent-shell.el").write_text(FAKE_AGENT_SHELL, encoding="utf-8")
    build = tmp_path / "build"
    build.mkdir()
    shutil.copy(EMACS_FILE, build / EMACS_FILE.name)
    compiled = subprocess.run(
        [emacs, "--batch", "-Q", "-L", str(stand_in), "-L", str(build),
         "--eval", "(setq byte-compile-error-on-warn t)",
         "-f", "batch-byte-compile", str(build / EMACS_FILE.name)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr
    assert (build / "earshot-agent-shell.elc").is_file()
    paths = {"stand_in": json.dumps(str(stand_in)), "folder": json.dumps(str(EMACS_FILE.parent))}
    expected = {"command": "earshot", "params": ["--stdio"]}
    # agent-shell's default: a list of makers; earshot's maker is added to it.
    added = _emacs_run(emacs, EMACS_PROBE % {**paths, "before": ""})
    assert added == {"identifiers": ["claude-code", "earshot"], **expected}
    # A user's function (a filter over the makers): wrapped, earshot offered too.
    user = "(setq agent-shell-agent-configs (lambda () (list (lambda () '(:identifier mine)))))"
    wrapped = _emacs_run(emacs, EMACS_PROBE % {**paths, "before": f"(require 'agent-shell) {user}"})
    assert wrapped == {"identifiers": ["mine", "earshot"], **expected}
    # An agent-shell from before makers: the configuration itself is added.
    legacy = _emacs_run(
        emacs,
        EMACS_PROBE % {**paths, "before": ""},
        env={"EARSHOT_TEST_LEGACY_AGENT_SHELL": "1"},
    )
    assert legacy["identifiers"][-1] == "earshot" and legacy["command"] == "earshot"


# -------------------------------------------------------------------------------------- Lua


def _lua_checker() -> list[str] | None:
    """A command that parses a Lua file without running it, with the file appended."""
    for name in ("luac5.4", "luac", "luac5.3", "luac5.1"):
        if shutil.which(name):
            return [name, "-p"]
    for name in ("lua5.4", "lua", "luajit", "lua5.3", "lua5.1"):
        if shutil.which(name):
            return [name, "-e", "assert(loadfile(arg[1]))"]
    if shutil.which("nvim"):
        return ["nvim", "--headless", "-u", "NONE", "-l"]
    return None


@pytest.mark.parametrize("name", ["avante.lua", "codecompanion.lua"])
def test_neovim_lua_parses(name: str, tmp_path: Path) -> None:
    checker = _lua_checker()
    if checker is None:
        pytest.skip("no luac, lua or nvim installed: the Lua syntax check needs one")
    path = EDITORS / "neovim" / name
    if checker[0] == "nvim":
        # nvim -l runs the file: check that it compiles, without calling require().
        probe = tmp_path / "probe.lua"
        probe.write_text(f"assert(loadfile({json.dumps(str(path))}))\n", encoding="utf-8")
        command = [*checker, str(probe)]
    elif "-e" in checker:
        command = [checker[0], "-e", f"assert(loadfile({json.dumps(str(path))}))"]
    else:
        command = [*checker, str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr


def test_a_lua_syntax_error_is_caught(tmp_path: Path) -> None:
    checker = _lua_checker()
    if checker is None or checker[0] == "nvim" or "-e" in checker:
        pytest.skip("needs luac to show the check can fail")
    broken = tmp_path / "broken.lua"
    broken.write_text('require("x").setup({ a = { }\n', encoding="utf-8")
    done = subprocess.run([*checker, str(broken)], capture_output=True, text=True, check=False)
    assert done.returncode != 0


# ---------------------------------------------------------------------------------- READMEs


def test_every_editor_folder_has_a_readme_with_an_install_that_works() -> None:
    for folder in EDITORS.iterdir():
        if not folder.is_dir():
            continue
        readme = folder / "README.md"
        assert readme.is_file(), folder
        text = readme.read_text(encoding="utf-8")
        assert not re.search(NOT_ON_AN_INDEX, text), f"{readme}: earshot-agent is on no index"
        assert re.search(
            r"scripts/install|pipx install \.|uv tool install \.|\.venv/bin/earshot", text
        )
    top = (EDITORS / "README.md").read_text(encoding="utf-8")
    assert "./scripts/install" in top
    assert "pipx install ." in top and "uv tool install ." in top


# ---------------------------------------------------------------------------- scripts/install

ROOT = EDITORS.parent


def test_the_readmes_first_command_is_the_install_script_and_no_index_is_named() -> None:
    """Issue 26.10: the quick start began with `pipx install .`, which a fresh Debian or Ubuntu
    does not have; it begins with ./scripts/install (Python 3.11+ alone). `.ci/run` runs that
    script on the fresh clone and the installed earshot must answer --version."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in quick_start.strip().splitlines()]
    assert commands[1] == "./scripts/install", commands
    assert not re.search(r"pip install '?" + NOT_ON_AN_INDEX, readme)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "./scripts/install" in ci and '.local/bin/earshot" --version' in ci
    assert os.access(ROOT / "scripts" / "install", os.X_OK)


def test_the_install_script_refuses_a_python_older_than_3_11(tmp_path: Path) -> None:
    old = tmp_path / "python3.9"
    old.write_text(
        '#!/bin/sh\ncase "$2" in *exit*) exit 1 ;; *) echo 3.9.18 ;; esac\n', encoding="utf-8"
    )
    old.chmod(0o755)
    home = tmp_path / "home"
    done = subprocess.run(
        [str(ROOT / "scripts" / "install")],
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(home), "PYTHON": str(old)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert "3.9.18 is too old: earshot needs Python 3.11 or newer" in done.stderr
    assert not home.exists()  # nothing made


AVANTE_STUB = """
package.preload["avante"] = function()
  return {
    setup = function(config)
      local entry = config.acp_providers[config.provider]
      local names = {}
      for name in pairs(entry.env) do names[#names + 1] = name end
      table.sort(names)
      for _, name in ipairs(names) do io.write(name, "=", entry.env[name], "\\n") end
    end,
  }
end
dofile(arg[1])
"""


def _lua() -> str | None:
    return next((found for name in ("lua5.4", "lua") if (found := shutil.which(name))), None)


def _avante_env(lua: str, environ: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The environment avante starts earshot with: `PATH` and the entry's `env`, as
    acp_client.lua's `_create_stdio_transport` builds it (tests/data/clients/avante.json), the
    entry evaluated by Lua."""
    inherited = json.loads((DATA / "clients" / "avante.json").read_text(encoding="utf-8"))
    assert inherited["inherited"] == ["PATH"]
    stub = tmp_path / "stub.lua"
    stub.write_text(AVANTE_STUB, encoding="utf-8")
    done = subprocess.run(
        [lua, str(stub), str(EDITORS / "neovim" / "avante.lua")],
        env=environ,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    entry = dict(line.split("=", 1) for line in done.stdout.splitlines())
    return {"PATH": environ["PATH"], **entry}


def _session_new(env: dict[str, str], cwd: Path) -> dict[str, Any]:
    earshot = Path(sys.executable).parent / "earshot"
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(cwd), "mcpServers": []},
        },
    ]
    done = subprocess.run(
        [str(earshot), "--stdio"],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=cwd,
        check=False,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    return next(reply for reply in replies if reply.get("id") == 2)


def test_avante_forwards_what_earshot_needs(tmp_path: Path) -> None:
    """Issue 26.5: avante starts an agent with PATH and the entry's `env` alone; the entry
    forwarded ANTHROPIC_API_KEY only, so a Groq key, or settings under XDG_CONFIG_HOME, were
    not seen and session/new failed. Lua evaluates the entry in an editor's environment; earshot
    then starts as avante starts it."""
    from providers.builtin_providers import BUILTIN_PROVIDERS

    text = (EDITORS / "neovim" / "avante.lua").read_text(encoding="utf-8")
    listed = set(_lua_strings(text.split("local forwarded = {", 1)[1].split("\n}", 1)[0]))
    known = {name for spec in BUILTIN_PROVIDERS for name in (*spec.env, *spec.token_env)}
    assert known <= listed, sorted(known - listed)
    assert {"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR", "EARSHOT_MODEL"} <= listed
    lua = _lua()
    if lua is None:
        pytest.skip("no lua installed: the avante entry is checked by name only")
    home = tmp_path / "home"
    home.mkdir()
    editor = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "GROQ_API_KEY": "gsk-test-avante",
        "UNRELATED_SECRET": "not forwarded",
    }
    started = _avante_env(lua, editor, tmp_path)
    assert started["GROQ_API_KEY"] == "gsk-test-avante" and "UNRELATED_SECRET" not in started
    assert "ANTHROPIC_API_KEY" not in started  # unset: left out, not an empty string
    answer = _session_new(started, tmp_path)
    assert "result" in answer, answer
    assert answer["result"]["configOptions"]
    # The entry as it was: the Groq key never reached earshot.
    before = _session_new({"PATH": editor["PATH"], "HOME": str(home)}, tmp_path)
    assert before["error"]["code"] == -32000
