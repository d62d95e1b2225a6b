"""`earshot doctor` in a fake HOME: every check says what it found and, when something is wrong,
how to fix it; secrets are never printed."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from earshot.doctor_editors import strip_jsonc
from tests.earshot.support import DEMO_SERVER, Env, earshot, make_env
from tests.loopback import Reply, loopback

EDITORS = Path(__file__).resolve().parents[2] / "editors"
SECRET = "sk-ant-doctor-secret-0123456789"


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def fake_earshot(env: Env) -> Path:
    """An executable named earshot on the test's PATH."""
    bin_dir = env.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    command = bin_dir / "earshot"
    command.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    command.chmod(0o755)
    return command


def section(output: str, title: str) -> list[str]:
    lines = output.split(f"\n{title}\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return [line.strip() for line in lines]


async def test_doctor_reports_each_part_of_the_setup(env: Env) -> None:
    command = fake_earshot(env)
    # Zed settings are JSON with comments and trailing commas.
    zed = env.config_home / "zed" / "settings.json"
    zed.parent.mkdir(parents=True)
    zed.write_text(
        '// my settings\n{\n  "agent_servers": {\n    "earshot": {"type": "custom", '
        f'"command": "{command}", "args": ["--stdio"],}},\n  }},\n}}\n',
        encoding="utf-8",
    )
    jetbrains = env.home / ".jetbrains" / "acp.json"
    jetbrains.parent.mkdir(parents=True)
    jetbrains.write_text(
        json.dumps(
            {"agent_servers": {"earshot": {"command": "/home/you/.local/bin/earshot", "args": []}}}
        ),
        encoding="utf-8",
    )
    # Toad 0.6.20 reads agents only from its package data, beside the toad it runs (as uv
    # installs it: a venv whose script is linked onto PATH); ~/.config/toad/agents is not read.
    unread = env.config_home / "toad" / "agents"
    unread.mkdir(parents=True)
    shutil.copy(EDITORS / "toad" / "earshot.toml", unread / "earshot.toml")
    toad_env = env.root / "uv-tools" / "batrachian-toad"
    toad = toad_env / "lib" / "python3.14" / "site-packages" / "toad" / "data" / "agents"
    toad.mkdir(parents=True)
    shutil.copy(EDITORS / "toad" / "earshot.toml", toad / "earshot.toml")
    (toad / "goose.ai.toml").write_text('run_command."*" = "goose acp"\n', encoding="utf-8")
    (toad_env / "bin").mkdir()
    (toad_env / "bin" / "toad").write_text(f"#!{toad_env}/bin/python\n", encoding="utf-8")
    (toad_env / "bin" / "toad").chmod(0o755)
    (command.parent / "toad").symlink_to(toad_env / "bin" / "toad")
    project = env.workspace / ".earshot" / "settings.local.json"
    project.parent.mkdir()
    project.write_text('{"mode": "sometimes"}', encoding="utf-8")
    with loopback() as server:
        server.routes["GET /v1/models"] = Reply.json(
            {"data": [{"id": "test-model", "max_model_len": 4096}, {"id": "other-model"}]}
        )
        env.local_provider(
            server.url,
            mcpServers={
                "demo": {"command": sys.executable, "args": [str(DEMO_SERVER)]},
                "broken": {"command": "/nonexistent/earshot-mcp"},
            },
        )
        path = f"{command.parent}{os.pathsep}{os.environ.get('PATH', '')}"
        run = await earshot(env, "doctor", extra_env={"PATH": path, "ANTHROPIC_API_KEY": SECRET})
    output = run.stdout
    assert run.code == 1, output
    assert SECRET not in output + run.stderr
    assert (
        section(output, "Python and earshot")[1]
        == f"ok      earshot 0.1.0, the command is {command}"
    )

    settings = section(output, "Settings")
    assert settings[0].startswith(f"ok      user settings {env.config_home}")
    assert settings[0].endswith(": mcpServers, model, providers")
    assert any(line.startswith("problem") and str(project) in line for line in settings)
    assert any(line.startswith("fix: correct the file") for line in settings)

    # The rest is still checked when a settings file is invalid... except what needs settings.
    assert "\nCredentials\n" not in output

    editors = section(output, "Editors")
    assert editors[0] == (f"ok      Zed ({zed}): agent_servers.earshot runs {command} --stdio")
    assert editors[1].startswith(
        f"problem JetBrains ({jetbrains}): agent_servers.earshot: the command"
    )
    assert editors[2] == f"fix: set it to {command}"
    assert editors[3] == f"ok      Toad ({toad / 'earshot.toml'}) runs earshot --stdio"
    assert editors[4].startswith(f"note    Toad: {unread / 'earshot.toml'} is not read")
    assert editors[5] == (
        'fix: run `toad acp "earshot --stdio"` in your project, or copy '
        f"editors/toad/earshot.toml into {toad}"
    )


async def test_doctor_checks_keys_model_servers_and_mcp(env: Env) -> None:
    with loopback() as server:
        server.routes["GET /v1/models"] = Reply.json(
            {"data": [{"id": "test-model", "max_model_len": 4096}, {"id": "other-model"}]}
        )
        env.local_provider(
            server.url,
            mcpServers={
                "demo": {"command": sys.executable, "args": [str(DEMO_SERVER)]},
                "broken": {"command": "/nonexistent/earshot-mcp"},
            },
        )
        run = await earshot(env, "doctor", extra_env={"ANTHROPIC_API_KEY": SECRET})
        # The model list was fetched and cached for the picker.
        cached = env.data_home / "earshot" / "server-models" / "local.json"
        assert json.loads(cached.read_text(encoding="utf-8"))["models"][0]["id"] == "test-model"
    output = run.stdout
    assert SECRET not in output + run.stderr
    credentials = section(output, "Credentials")
    assert "ok      anthropic: ANTHROPIC_API_KEY is set" in credentials
    assert "ok      local: apiKey in providers.local (settings)" in credentials
    assert "fix: set OPENAI_API_KEY to use OpenAI" in credentials
    model = section(output, "Model")
    assert model[0] == 'ok      new sessions use local/test-model ("model" in settings)'
    assert model[1] == "ok      context window 4,096 tokens"  # what the server reported
    servers = section(output, "Model servers")
    assert servers == [f"ok      local ({server.url}/v1): 2 models (test-model, other-model)"]
    mcp = section(output, "MCP servers")
    assert any(line.startswith("ok      demo: ") and "add" in line for line in mcp)
    assert any(line.startswith("problem broken: ") for line in mcp)
    tools = section(output, "Tools")
    assert any(line.startswith("ok      git version") for line in tools)
    assert run.code == 1  # the broken MCP server


async def test_doctor_says_what_to_install_when_tools_are_missing(env: Env) -> None:
    env.local_provider("http://127.0.0.1:9")
    # Only python on PATH: no git, no rg, no earshot.
    python_dir = env.root / "python-only"
    python_dir.mkdir()
    (python_dir / "python3").symlink_to(sys.executable)
    run = await earshot(env, "doctor", extra_env={"PATH": str(python_dir)})
    tools = section(run.stdout, "Tools")
    assert tools[0].startswith("problem git (git) is not on PATH")
    assert tools[1] == "fix: install git (apt install git, brew install git)"
    assert tools[2].startswith("problem ripgrep (rg) is not on PATH: the grep tool needs it")
    servers = section(run.stdout, "Model servers")
    assert servers[0].startswith(
        "problem local (http://127.0.0.1:9/v1): http://127.0.0.1:9/v1/models"
    )
    assert servers[1] == "fix: start the server, or correct providers.local.baseUrl"
    # No bwrap on PATH: the real sandbox module says why there is none.
    sandbox = section(run.stdout, "Sandbox")
    assert sandbox[0] == (
        "problem no command sandbox: bubblewrap (bwrap) is not installed; every command will ask"
    )
    assert sandbox[1].startswith("fix: install bubblewrap")
    assert run.code == 1


@pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/test installs it)"
)
async def test_doctor_reports_the_sandbox_a_session_would_get(env: Env) -> None:
    env.local_provider("http://127.0.0.1:9", sandbox={"network": False, "writablePaths": ["/opt"]})
    run = await earshot(env, "doctor")
    sandbox = section(run.stdout, "Sandbox")
    assert sandbox[0].startswith("ok      commands run in a ")
    assert sandbox[0].endswith(" sandbox, without the network")
    assert sandbox[1] == "note    also writable: /opt"
    env.local_provider("http://127.0.0.1:9", sandbox={"enabled": False})
    run = await earshot(env, "doctor")
    sandbox = section(run.stdout, "Sandbox")
    assert sandbox[0].startswith("note    the command sandbox is turned off in settings")


def test_zed_settings_with_comments_and_trailing_commas_parse() -> None:
    text = '{\n  // a comment with "quotes"\n  "a": "http://x//y", /* block */\n  "b": [1, 2,],\n}'
    assert json.loads(strip_jsonc(text)) == {"a": "http://x//y", "b": [1, 2]}


def test_doctor_says_how_to_reach_toad_when_earshot_is_not_in_its_list(tmp_path: Path) -> None:
    from earshot.doctor_editors import editor_findings

    environ = {"HOME": str(tmp_path), "PATH": str(tmp_path / "bin")}
    [*_, missing] = editor_findings(environ)
    assert missing.text.startswith("Toad: not installed") and "toad acp" in missing.text
    venv = tmp_path / "toad-venv"
    agents = venv / "lib" / "python3.14" / "site-packages" / "toad" / "data" / "agents"
    agents.mkdir(parents=True)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "toad").write_text(f"#!{venv}/bin/python3\n", encoding="utf-8")
    (tmp_path / "bin" / "toad").chmod(0o755)
    [*_, unlisted] = editor_findings(environ)
    assert unlisted.text == f"Toad: earshot is not in Toad's agent list ({agents})"
    assert unlisted.fix.startswith('run `toad acp "earshot --stdio"`')
