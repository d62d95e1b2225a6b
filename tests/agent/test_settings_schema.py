"""The hand-written settings schema (agent.settings.schema): every checker's problem, exactly
worded; every problem of a file reported at once; no value from a file in any message or repr;
and `import agent.settings.scopes` staying light."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.settings.scopes import (
    CostSettings,
    HookSettings,
    HooksSettings,
    HttpServerSettings,
    InvalidSettings,
    ModelSettings,
    PermissionSettings,
    ProviderSettings,
    Secret,
    SettingsError,
    SettingsFile,
    StdioServerSettings,
    load_settings,
    read_settings_file,
)

MODES_LISTED = "must be one of 'plan', 'ask', 'accept-edits', 'auto', 'yolo'"
APIS_LISTED = "must be one of 'openai-chat', 'openai-responses', 'anthropic', 'gemini', 'scripted'"
SERVER_TYPES_LISTED = "must be one of 'stdio', 'http', 'sse'"


def problems_of(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(InvalidSettings) as caught:
        SettingsFile.model_validate(data)
    return list(caught.value.problems)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # wrong JSON type, per checker
        ({"model": 7}, [("model", "must be a string")]),
        ({"models": {"m": {"vision": "yes"}}}, [("models.m.vision", "must be true or false")]),
        ({"models": {"m": {"toolCall": 1}}}, [("models.m.toolCall", "must be true or false")]),
        ({"permissions": {"deny": "Read"}}, [("permissions.deny", "must be a list")]),
        ({"providers": []}, [("providers", "must be an object")]),
        ({"providers": {"x": "openai"}}, [("providers.x", "must be an object")]),
        ({"providers": {"x": {"headers": None}}}, [("providers.x.headers", "must be an object")]),
        ({"hooks": {"stop": {}}}, [("hooks.stop", "must be a list")]),
        ({"hooks": {"stop": ["notify"]}}, [("hooks.stop.0", "must be an object")]),
        ({"permissions": None}, [("permissions", "must be an object")]),
        # integers: a bool, a float or a numeric string is not one; zero is out of range
        (
            {"models": {"m": {"contextWindow": True}}},
            [("models.m.contextWindow", "must be an integer greater than 0")],
        ),
        (
            {"models": {"m": {"maxOutput": 1.5}}},
            [("models.m.maxOutput", "must be an integer greater than 0")],
        ),
        (
            {"models": {"m": {"maxOutput": "8192"}}},
            [("models.m.maxOutput", "must be an integer greater than 0")],
        ),
        (
            {"models": {"m": {"contextWindow": 0}}},
            [("models.m.contextWindow", "must be an integer greater than 0")],
        ),
        # numbers: not a bool, not a string, and within range
        (
            {"models": {"m": {"cost": {"input": False}}}},
            [("models.m.cost.input", "must be a number greater than or equal to 0")],
        ),
        (
            {"models": {"m": {"cost": {"cacheRead": "0.3"}}}},
            [("models.m.cost.cacheRead", "must be a number greater than or equal to 0")],
        ),
        (
            {"models": {"m": {"cost": {"cacheWrite": -0.01}}}},
            [("models.m.cost.cacheWrite", "must be a number greater than or equal to 0")],
        ),
        (
            {"hooks": {"stop": [{"command": "x", "timeout": 0}]}},
            [("hooks.stop.0.timeout", "must be a number greater than 0")],
        ),
        (
            {"hooks": {"stop": [{"command": "x", "timeout": True}]}},
            [("hooks.stop.0.timeout", "must be a number greater than 0")],
        ),
        # literals
        ({"mode": "reckless"}, [("mode", MODES_LISTED)]),
        ({"mode": "ASK"}, [("mode", MODES_LISTED)]),
        ({"mode": 1}, [("mode", MODES_LISTED)]),
        ({"providers": {"x": {"api": "soap"}}}, [("providers.x.api", APIS_LISTED)]),
        # the MCP server union's tag
        ({"mcpServers": {"s": {"type": "ws"}}}, [("mcpServers.s.type", SERVER_TYPES_LISTED)]),
        ({"mcpServers": {"s": {"type": None}}}, [("mcpServers.s.type", SERVER_TYPES_LISTED)]),
        ({"mcpServers": {"s": []}}, [("mcpServers.s", "must be an object")]),
        # elements of maps and lists
        (
            {"providers": {"x": {"headers": {"x-team": 7}}}},
            [("providers.x.headers.x-team", "must be a string")],
        ),
        (
            {"mcpServers": {"s": {"command": "c", "env": {"A": None}}}},
            [("mcpServers.s.env.A", "must be a string")],
        ),
        (
            {"permissions": {"allow": ["Read", 3, "Edit", False]}},
            [
                ("permissions.allow.1", "must be a string"),
                ("permissions.allow.3", "must be a string"),
            ],
        ),
        (
            {"mcpServers": {"s": {"command": "c", "args": [1]}}},
            [("mcpServers.s.args.0", "must be a string")],
        ),
        ({"trustedDirectories": [None]}, [("trustedDirectories.0", "must be a string")]),
        ({"providers": {"x": {"apiKey": 12345}}}, [("providers.x.apiKey", "must be a string")]),
        # unknown keys, at every nesting level (the file's keys are camelCase, not snake_case)
        ({"modle": "x"}, [("modle", "unknown key")]),
        ({"mcp_servers": {}}, [("mcp_servers", "unknown key")]),
        ({"providers": {"x": {"base_url": "http://x"}}}, [("providers.x.base_url", "unknown key")]),
        ({"models": {"m": {"context_window": 5}}}, [("models.m.context_window", "unknown key")]),
        (
            {"models": {"m": {"cost": {"cache_read": 1}}}},
            [("models.m.cost.cache_read", "unknown key")],
        ),
        ({"permissions": {"always": []}}, [("permissions.always", "unknown key")]),
        (
            {"mcpServers": {"s": {"command": "c", "url": "u"}}},
            [("mcpServers.s.url", "unknown key")],
        ),
        (
            {"mcpServers": {"h": {"type": "sse", "url": "u", "command": "c"}}},
            [("mcpServers.h.command", "unknown key")],
        ),
        ({"hooks": {"preToolUse": []}}, [("hooks.preToolUse", "unknown key")]),
        (
            {"hooks": {"stop": [{"command": "x", "when": "y"}]}},
            [("hooks.stop.0.when", "unknown key")],
        ),
        # required keys
        (
            {"mcpServers": {"s": {"args": []}}},
            [("mcpServers.s.command", "required key is missing")],
        ),
        (
            {"mcpServers": {"h": {"type": "http"}}},
            [("mcpServers.h.url", "required key is missing")],
        ),
        (
            {"hooks": {"stop": [{"matcher": "Bash"}]}},
            [("hooks.stop.0.command", "required key is missing")],
        ),
    ],
)
def test_each_problem_is_named_exactly(data: Any, expected: list[tuple[str, str]]) -> None:
    assert problems_of(data) == expected


def test_a_valid_file_becomes_the_dataclasses() -> None:
    parsed = SettingsFile.model_validate(
        {
            "$schema": "https://example.invalid/settings.json",
            "model": None,
            "mode": "plan",
            "providers": {"x": {"api": "anthropic", "apiKey": "test-key", "headers": {"a": "b"}}},
            "models": {
                "x/m": {
                    "contextWindow": 10,
                    "toolCall": False,
                    "cost": {"input": 2, "cacheRead": 0},
                }
            },
            "mcpServers": {
                "s": {
                    "type": "stdio",
                    "command": "c",
                    "args": ["-v"],
                    "env": {"A": "1"},
                    "cwd": "d",
                },
                "h": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
            },
            "hooks": {"user_prompt_submit": [{"command": "log", "timeout": 2}]},
            "trustedDirectories": ["/abs"],
        }
    )
    assert parsed == SettingsFile(
        schema_="https://example.invalid/settings.json",
        mode="plan",
        providers={
            "x": ProviderSettings(api="anthropic", api_key=Secret("test-key"), headers={"a": "b"})
        },
        models={
            "x/m": ModelSettings(
                context_window=10, tool_call=False, cost=CostSettings(input=2.0, cache_read=0.0)
            )
        },
        mcp_servers={
            "s": StdioServerSettings(command="c", args=["-v"], env={"A": "1"}, cwd="d"),
            "h": HttpServerSettings(type="sse", url="http://127.0.0.1:1/sse"),
        },
        hooks=HooksSettings(user_prompt_submit=[HookSettings(command="log", timeout=2.0)]),
        trusted_directories=["/abs"],
    )
    # JSON integers for float fields become floats, as pydantic made them.
    cost = parsed.models["x/m"].cost
    assert cost is not None and type(cost.input) is float
    assert parsed.permissions == PermissionSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.model = "x/y"  # pyright: ignore[reportAttributeAccessIssue]


def test_nan_is_not_a_price() -> None:
    # Python's json accepts NaN and Infinity; NaN is no number >= 0.
    assert problems_of(json.loads('{"models": {"m": {"cost": {"input": NaN}}}}')) == [
        ("models.m.cost.input", "must be a number greater than or equal to 0")
    ]


def test_every_problem_in_a_file_is_reported_together(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "mode": "yolo!",
                "providers": {"x": {"baseUrl": 1, "proxy": "p"}},
                "models": {"m": {"contextWindow": -1, "cost": {"output": "free"}}},
                "permissions": {"allow": [None]},
                "mcpServers": {"s": {}, "t": {"type": "grpc"}},
                "hooks": {"stop": [{}]},
                "colour": "blue",
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(SettingsError) as caught:
        read_settings_file(path, "user")
    assert str(caught.value) == (
        f"{path}: invalid settings: mode: {MODES_LISTED}; "
        "providers.x.baseUrl: must be a string; providers.x.proxy: unknown key; "
        "models.m.contextWindow: must be an integer greater than 0; "
        "models.m.cost.output: must be a number greater than or equal to 0; "
        "permissions.allow.0: must be a string; "
        "mcpServers.s.command: required key is missing; "
        f"mcpServers.t.type: {SERVER_TYPES_LISTED}; "
        "hooks.stop.0.command: required key is missing; "
        "colour: unknown key"
    )


MARK = "sk-live-VALUE-MUST-NOT-SHOW"


def everything_wrong(mark: str) -> dict[str, Any]:
    """The marker as the value of every key, where it is wrong (and as the apiKey, where it is
    right, next to a wrong sibling)."""
    return {
        "$schema": [mark],
        "model": {mark: mark},
        "mode": mark,
        "providers": {
            "x": {"api": mark, "baseUrl": [mark], "apiKey": mark, "headers": {"h": [mark]}},
            "y": {"apiKey": [mark], "apiKeyEnv": {"k": mark}},
        },
        "models": {
            "m": {
                "name": [mark],
                "contextWindow": mark,
                "vision": mark,
                "cost": {"input": mark, "cacheWrite": [mark]},
            }
        },
        "permissions": {"allow": [[mark]], "deny": mark},
        "mcpServers": {
            "a": {"type": mark, "command": mark},
            "b": {"command": [mark], "env": {"TOKEN": {mark: mark}}},
            "c": {"type": "http", "url": {mark: 1}, "headers": [mark]},
        },
        "hooks": {
            "stop": [{"command": [mark], "timeout": mark, "matcher": 5}],
            "post_tool_use": mark,
        },
        "trustedDirectories": mark,
    }


def test_no_message_contains_a_value_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(everything_wrong(MARK)), encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        read_settings_file(path, "user")
    message = str(caught.value)
    assert message.count("; ") >= 20  # every problem is there...
    assert "sk-live" not in message and "VALUE" not in message  # ...and no value
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_no_repr_contains_a_key_or_a_header(tmp_path: Path) -> None:
    config_home = tmp_path / "config"
    (config_home / "earshot").mkdir(parents=True)
    (config_home / "earshot" / "settings.json").write_text(
        json.dumps(
            {
                "providers": {
                    "x": {"apiKey": MARK, "headers": {"Authorization": f"Bearer {MARK}"}}
                },
                "mcpServers": {
                    "s": {"command": "c", "env": {"TOKEN": MARK}},
                    "h": {"type": "http", "url": "http://127.0.0.1:1", "headers": {"k": MARK}},
                },
            }
        ),
        encoding="utf-8",
    )
    settings = load_settings(tmp_path, environ={}, config_home=config_home)
    provider = settings.providers["x"]
    assert provider.api_key is not None and provider.api_key.get_secret_value() == MARK
    for shown in (
        repr(settings),
        str(settings),
        repr(provider),
        repr(settings.mcp_servers),
        repr(settings.user_providers()),
        str(provider.api_key),
        f"{provider.api_key}",
        repr(provider.api_key),
    ):
        assert MARK not in shown
    assert repr(provider.api_key) == "Secret('**********')"


def test_secrets_compare_by_value() -> None:
    assert Secret("a") == Secret("a") and Secret("a") != Secret("b")
    assert Secret("a") != "a"
    assert len({Secret("a"), Secret("a")}) == 1


def test_each_section_validates_on_its_own() -> None:
    hooks = HooksSettings.model_validate({"pre_tool_use": [{"matcher": "Bash", "command": "x"}]})
    assert hooks.pre_tool_use == [HookSettings(matcher="Bash", command="x")]
    with pytest.raises(InvalidSettings) as caught:
        ProviderSettings.model_validate({"api": "rest"})
    assert caught.value.problems == (("api", APIS_LISTED),)
    assert str(caught.value) == f"api: {APIS_LISTED}"


def test_importing_the_settings_loads_no_pydantic_subprocess_or_backends(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".earshot").mkdir(parents=True)
    (project / ".earshot" / "settings.json").write_text(
        json.dumps(
            {
                "mode": "plan",
                "providers": {"p": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:1"}},
                "models": {"p/m": {"contextWindow": 1000}},
                "permissions": {"deny": ["Bash(rm *)"]},
            }
        ),
        encoding="utf-8",
    )
    heavy = ("pydantic", "subprocess", "shlex", "agent.backends", "providers.types")
    code = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "import agent.settings.scopes\n"
        f"heavy = {heavy!r}\n"
        "on_import = [m for m in heavy + ('providers.catalog', 'providers.registry')\n"
        "             if m in sys.modules]\n"
        "settings = agent.settings.scopes.load_settings(\n"
        f"    Path({str(project)!r}), environ={{}}, config_home=Path({str(tmp_path)!r}))\n"
        "on_load = [m for m in heavy if m in sys.modules]\n"
        "print(json.dumps({'import': on_import, 'load': on_load, 'mode': settings.mode}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    # Reading a project file imports the registry (its built-in provider checks), still none of
    # the heavy modules (git, hence subprocess, is asked about a local file only).
    assert json.loads(result.stdout) == {"import": [], "load": [], "mode": "plan"}
