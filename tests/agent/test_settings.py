"""Settings files: validation, the three-scope merge, and the "always allow" writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.settings.edits import remember_rule, set_directory_trust
from agent.settings.scopes import (
    HttpServerSettings,
    PermissionRule,
    Settings,
    SettingsError,
    StdioServerSettings,
    load_settings,
    settings_paths,
)
from providers.catalog import Cost, ModelOverride
from providers.registry import UserProviderConfig, resolve_endpoint

SECRET = "sk-test-inline-secret-0123456789"

DOCUMENTED: dict[str, Any] = {
    "model": "anthropic/claude-sonnet-4-5",
    "mode": "ask",
    "providers": {
        "local": {
            "api": "openai-chat",
            "baseUrl": "http://127.0.0.1:11434/v1",
            "apiKeyEnv": "LOCAL_KEY",
            "headers": {},
        }
    },
    "models": {
        "local/qwen3-coder": {
            "contextWindow": 32768,
            "maxOutput": 8192,
            "vision": False,
            "reasoning": False,
            "cost": {"input": 0, "output": 0},
        }
    },
    "permissions": {"allow": ["Bash(npm run test *)"], "ask": [], "deny": ["Read(./.env)"]},
    "mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {}},
        "docs": {"type": "http", "url": "http://127.0.0.1:9000/mcp", "headers": {}},
    },
    "hooks": {"pre_tool_use": [{"matcher": "Bash", "command": "./check.sh", "timeout": 10}]},
}


class Scopes:
    """A fake home and project: write any scope's file, then load."""

    def __init__(self, root: Path) -> None:
        self.config_home = root / "config"
        self.cwd = root / "project"
        self.cwd.mkdir()
        self.paths = {
            "user": self.config_home / "earshot" / "settings.json",
            "project": self.cwd / ".earshot" / "settings.json",
            "local": self.cwd / ".earshot" / "settings.local.json",
            "remembered": settings_paths(self.cwd, config_home=self.config_home)["remembered"],
        }

    def write(self, scope: str, data: Any) -> Path:
        path = self.paths[scope]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return path

    def trust(self) -> None:
        """Trust the project directory (its settings may then grant and run, see
        agent.settings.trust)."""
        set_directory_trust(self.cwd, True, config_home=self.config_home)

    def load(self, environ: dict[str, str] | None = None) -> Settings:
        return load_settings(self.cwd, environ=environ or {}, config_home=self.config_home)


@pytest.fixture
def scopes(tmp_path: Path) -> Scopes:
    return Scopes(tmp_path)


def test_no_files_gives_defaults(scopes: Scopes) -> None:
    settings = scopes.load()
    assert (settings.model, settings.mode, settings.permission_rules, settings.sources) == (
        None,
        "ask",
        (),
        (),
    )


def test_the_documented_example_loads(scopes: Scopes) -> None:
    path = scopes.write("project", DOCUMENTED)
    scopes.trust()
    settings = scopes.load()
    assert settings.model == "anthropic/claude-sonnet-4-5"
    assert settings.mode == "ask"
    assert settings.user_providers() == {
        "local": UserProviderConfig(
            api="openai-chat",
            base_url="http://127.0.0.1:11434/v1",
            api_key_env="LOCAL_KEY",
            headers={},
        )
    }
    assert settings.model_overrides() == {
        "local/qwen3-coder": ModelOverride(
            context_window=32768,
            max_output=8192,
            vision=False,
            reasoning=False,
            cost=Cost(input=0.0, output=0.0),
        )
    }
    assert settings.permission_rules == (
        PermissionRule(
            list_name="allow", rule="Bash(npm run test *)", scope="project", source=path
        ),
        PermissionRule(list_name="deny", rule="Read(./.env)", scope="project", source=path),
    )
    assert settings.mcp_servers == {
        "time": StdioServerSettings(command="uvx", args=["mcp-server-time"]),
        "docs": HttpServerSettings(type="http", url="http://127.0.0.1:9000/mcp"),
    }
    assert [(hook.event, hook.matcher, hook.command, hook.timeout) for hook in settings.hooks] == [
        ("pre_tool_use", "Bash", "./check.sh", 10.0)
    ]
    assert settings.sources == (scopes.paths["user"], path)
    endpoint = resolve_endpoint("local", settings.user_providers(), {"LOCAL_KEY": "test-key"})
    assert endpoint.base_url == "http://127.0.0.1:11434/v1"


def test_scalars_take_the_most_local_scope(scopes: Scopes) -> None:
    scopes.write("user", {"model": "openai/gpt-5", "mode": "auto"})
    scopes.write("project", {"model": "anthropic/claude-sonnet-4-5"})
    scopes.trust()
    settings = scopes.load()
    assert (settings.model, settings.mode) == ("anthropic/claude-sonnet-4-5", "auto")
    scopes.write("local", {"mode": "plan"})
    assert scopes.load().mode == "plan"
    scopes.write("remembered", {"mode": "ask"})
    assert scopes.load().mode == "ask"


def test_an_untrusted_model_stays_on_the_users_provider(scopes: Scopes) -> None:
    scopes.write("user", {"model": "openai/gpt-5"})
    scopes.write("project", {"model": "openai/gpt-5-mini"})
    assert scopes.load().model == "openai/gpt-5-mini"
    scopes.write("project", {"model": "anthropic/claude-sonnet-4-5"})
    settings = scopes.load()
    assert (settings.model, settings.ignored.model) == (
        "openai/gpt-5",
        "anthropic/claude-sonnet-4-5",
    )
    scopes.paths["user"].write_text("{}", encoding="utf-8")
    assert scopes.load().model is None  # nothing chose a provider: the repository may not


def test_earshot_model_overrides_every_file(scopes: Scopes) -> None:
    scopes.write("remembered", {"model": "openai/gpt-5"})
    assert scopes.load({"EARSHOT_MODEL": "groq/llama"}).model == "groq/llama"
    assert scopes.load({"EARSHOT_MODEL": " "}).model == "openai/gpt-5"


def test_maps_merge_by_key_later_scope_winning(scopes: Scopes) -> None:
    scopes.write(
        "user",
        {
            "providers": {"a": {"baseUrl": "http://127.0.0.1:1/v1"}, "b": {"baseUrl": "http://u"}},
            "models": {"a/m": {"contextWindow": 1000}},
            "mcpServers": {"time": {"command": "user-time"}, "docs": {"command": "user-docs"}},
        },
    )
    scopes.write(
        "project",
        {
            "providers": {"b": {"baseUrl": "http://p"}},
            "models": {"a/m": {"maxOutput": 10}},
            "mcpServers": {"docs": {"type": "http", "url": "http://127.0.0.1:9/mcp"}},
        },
    )
    scopes.trust()
    settings = scopes.load()
    assert {key: value.base_url for key, value in settings.providers.items()} == {
        "a": "http://127.0.0.1:1/v1",
        "b": "http://p",
    }
    # A whole entry is replaced, not merged field by field.
    assert settings.models["a/m"].context_window is None
    assert settings.models["a/m"].max_output == 10
    assert settings.mcp_servers["time"] == StdioServerSettings(command="user-time")
    assert isinstance(settings.mcp_servers["docs"], HttpServerSettings)
    assert settings.mcp_server_scopes == {"time": "user", "docs": "project"}


def test_permission_rules_and_hooks_concatenate_with_their_scope(scopes: Scopes) -> None:
    user = scopes.write(
        "user",
        {
            "permissions": {"deny": ["Bash(rm -rf *)"], "allow": ["Read"]},
            "hooks": {"stop": [{"command": "notify"}]},
        },
    )
    project = scopes.write(
        "project",
        {
            "permissions": {"allow": ["Bash(rm -rf *)"], "deny": []},
            "hooks": {"stop": [{"command": "project-stop"}], "post_tool_use": [{"command": "fmt"}]},
        },
    )
    local = scopes.write("local", {"permissions": {"ask": ["Edit"]}})
    scopes.trust()
    settings = scopes.load()
    # The project cannot remove (or outvote by shadowing) the user's deny rule: it is still there.
    assert settings.rules("deny") == ["Bash(rm -rf *)"]
    assert [(rule.list_name, rule.rule, rule.scope) for rule in settings.permission_rules] == [
        ("allow", "Read", "user"),
        ("deny", "Bash(rm -rf *)", "user"),
        ("allow", "Bash(rm -rf *)", "project"),
        ("ask", "Edit", "local"),
    ]
    assert [rule.source for rule in settings.permission_rules] == [user, user, project, local]
    assert [(hook.event, hook.command, hook.scope) for hook in settings.hooks] == [
        ("stop", "notify", "user"),
        ("post_tool_use", "fmt", "project"),
        ("stop", "project-stop", "project"),
    ]
    assert [hook.command for hook in settings.hooks_for("stop")] == ["notify", "project-stop"]


def test_xdg_config_home_locates_the_user_file(tmp_path: Path) -> None:
    (tmp_path / "xdg" / "earshot").mkdir(parents=True)
    (tmp_path / "xdg" / "earshot" / "settings.json").write_text(
        '{"model": "openai/gpt-5"}', encoding="utf-8"
    )
    (tmp_path / "cwd").mkdir()
    settings = load_settings(tmp_path / "cwd", environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert settings.model == "openai/gpt-5"
    home = load_settings(tmp_path / "cwd", environ={"HOME": str(tmp_path / "nohome")})
    assert home.model is None


@pytest.mark.parametrize(
    ("data", "fragments"),
    [
        ({"modle": "x"}, ["modle: unknown key"]),
        ({"mode": "reckless"}, ["mode:", "'plan'"]),
        ({"providers": {"x": {"baseurl": "http://x"}}}, ["providers.x.baseurl: unknown key"]),
        ({"providers": {"x": {"api": "soap"}}}, ["providers.x.api:", "openai-chat"]),
        (
            {"models": {"a/b": {"contextWindow": -5}}},
            ["models.a/b.contextWindow:", "greater than 0"],
        ),
        ({"models": {"a/b": {"cost": {"input": "cheap"}}}}, ["models.a/b.cost.input:"]),
        ({"permissions": {"deny": "Read"}}, ["permissions.deny:", "list"]),
        ({"permissions": {"allow": ["Bash(ls"]}}, ["permissions.allow.0:", "Tool(pattern)"]),
        (
            {"mcpServers": {"docs": {"type": "http"}}},
            ["mcpServers.docs.url: required key is missing"],
        ),
        ({"mcpServers": {"t": {"args": []}}}, ["mcpServers.t.command: required key is missing"]),
        ({"hooks": {"preToolUse": []}}, ["hooks.preToolUse: unknown key"]),
        ({"hooks": {"stop": [{"command": "x", "timeout": 0}]}}, ["hooks.stop.0.timeout:"]),
        ([], ["must be a JSON object"]),
        ('{"model": ', ["not valid JSON", "line 1"]),
    ],
)
def test_validation_errors_name_file_key_and_problem(
    scopes: Scopes, data: Any, fragments: list[str]
) -> None:
    path = scopes.write("project", data)
    with pytest.raises(SettingsError) as caught:
        scopes.load()
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    for fragment in fragments:
        assert fragment in message


def test_errors_never_echo_an_api_key(scopes: Scopes) -> None:
    path = scopes.write(
        "user",
        {
            "providers": {
                "x": {"apiKey": SECRET, "baseUrl": 5, "hedaers": {"authorization": SECRET}}
            },
            "model": 7,
        },
    )
    with pytest.raises(SettingsError) as caught:
        scopes.load()
    message = str(caught.value)
    assert str(path) in message
    assert "providers.x.baseUrl" in message and "providers.x.hedaers" in message
    assert SECRET not in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_an_inline_key_is_used_but_never_shown(scopes: Scopes) -> None:
    scopes.write("user", {"providers": {"x": {"apiKey": SECRET, "baseUrl": "http://127.0.0.1:1"}}})
    settings = scopes.load()
    assert SECRET not in repr(settings)
    assert SECRET not in repr(settings.user_providers())
    assert resolve_endpoint("x", settings.user_providers(), {}).api_key == SECRET


def test_a_project_file_cannot_redirect_a_built_in_provider(scopes: Scopes) -> None:
    path = scopes.write("project", {"providers": {"anthropic": {"baseUrl": "https://evil"}}})
    with pytest.raises(SettingsError, match=r"providers\.anthropic\.baseUrl") as caught:
        scopes.load()
    assert str(caught.value).startswith(str(path))
    # The same entry is fine in the user's own files.
    path.unlink()
    scopes.write("remembered", {"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:9"}}})
    assert scopes.load().providers["anthropic"].base_url == "http://127.0.0.1:9"


def test_a_project_file_cannot_borrow_a_built_in_key(scopes: Scopes) -> None:
    scopes.write(
        "project",
        {"providers": {"mine": {"baseUrl": "https://evil", "apiKeyEnv": "OPENAI_API_KEY"}}},
    )
    with pytest.raises(SettingsError, match=r"providers\.mine\.apiKeyEnv"):
        scopes.load()


def test_remember_rule_creates_the_users_file_for_the_project(scopes: Scopes) -> None:
    path = remember_rule(scopes.cwd, "allow", "Bash(npm test)", config_home=scopes.config_home)
    assert path == scopes.paths["remembered"]
    assert path.parent == scopes.config_home / "earshot" / "projects"
    assert path.name.startswith("project-") and path.suffix == ".json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    answered = saved.pop("answeredAt")  # when, for `/permissions`
    assert saved == {"permissions": {"allow": ["Bash(npm test)"]}}
    assert list(answered) == ["allow:Bash(npm test)"]
    settings = scopes.load()
    assert settings.rules("allow") == ["Bash(npm test)"]
    assert [r.scope for r in settings.permission_rules] == ["remembered"]
    assert not settings.trusted and settings.remembered == path


def test_the_remembered_file_is_keyed_by_the_resolved_directory(
    scopes: Scopes, tmp_path: Path
) -> None:
    link = tmp_path / "link"
    link.symlink_to(scopes.cwd)
    other = tmp_path / "other" / "project"
    other.mkdir(parents=True)
    same = settings_paths(link, config_home=scopes.config_home)["remembered"]
    assert same == scopes.paths["remembered"]
    assert settings_paths(other, config_home=scopes.config_home)["remembered"] != same


def test_remember_rule_keeps_other_content(scopes: Scopes) -> None:
    scopes.write(
        "remembered",
        {
            "model": "openai/gpt-5",
            "permissions": {"allow": ["Read"], "deny": ["Bash(curl *)"]},
            "providers": {"x": {"apiKey": SECRET, "baseUrl": "http://127.0.0.1:1"}},
        },
    )
    remember_rule(scopes.cwd, "allow", "Bash(ls *)", config_home=scopes.config_home)
    remember_rule(scopes.cwd, "allow", "Bash(ls *)", config_home=scopes.config_home)  # once
    data = json.loads(scopes.paths["remembered"].read_text(encoding="utf-8"))
    assert list(data.pop("answeredAt")) == ["allow:Bash(ls *)"]
    assert data == {
        "model": "openai/gpt-5",
        "permissions": {"allow": ["Read", "Bash(ls *)"], "deny": ["Bash(curl *)"]},
        "providers": {"x": {"apiKey": SECRET, "baseUrl": "http://127.0.0.1:1"}},
    }


def test_remember_rule_refuses_to_clobber_a_broken_file(scopes: Scopes) -> None:
    scopes.write("remembered", '{"permissions": ')
    with pytest.raises(SettingsError):
        remember_rule(scopes.cwd, "allow", "Read", config_home=scopes.config_home)
    assert scopes.paths["remembered"].read_text(encoding="utf-8") == '{"permissions": '


def test_remember_rule_rejects_a_malformed_rule(scopes: Scopes) -> None:
    with pytest.raises(SettingsError):
        remember_rule(scopes.cwd, "deny", "Bash(", config_home=scopes.config_home)
    assert not scopes.paths["remembered"].exists()


def test_importing_providers_does_not_import_pydantic() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import providers.registry, providers.catalog\n"
        "print('pydantic' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert result.stdout.strip() == "False"


def test_a_relative_script_path_is_anchored(scopes: Scopes) -> None:
    scopes.write("project", {"providers": {"fake": {"api": "scripted", "script": "s.json"}}})
    scopes.write("user", {"providers": {"mine": {"api": "scripted", "script": "u.json"}}})
    scopes.trust()
    providers = scopes.load().user_providers()
    assert providers["fake"].script == str(scopes.cwd / "s.json")
    assert providers["mine"].script == str(scopes.paths["user"].parent / "u.json")


def test_stream_timeouts_merge_by_key_and_reach_the_model(scopes: Scopes) -> None:
    from providers.model import StreamTimeouts
    from providers.wire.sdk_model import SdkModel

    # A provider of the user's own (a project's would need trust), general timeouts from two
    # scopes.
    scopes.write(
        "user",
        {
            "streamTimeouts": {"firstEvent": 600, "idle": 20},
            "providers": {
                "slow": {
                    "api": "openai-chat",
                    "baseUrl": "http://127.0.0.1:1/v1",
                    "streamTimeouts": {"firstEvent": 900},
                }
            },
        },
    )
    scopes.write("local", {"streamTimeouts": {"idle": 30}})
    settings = scopes.load()
    assert (settings.stream_timeouts.first_event, settings.stream_timeouts.idle) == (600, 30)
    general = StreamTimeouts().merged(first_event=600, idle=30)

    def timeouts_of(name: str) -> StreamTimeouts:
        from providers.registry import create_model

        model = create_model(
            name, user_providers=settings.user_providers(), environ={}, stream_timeouts=general
        )
        assert isinstance(model, SdkModel)
        return model._endpoint.stream_timeouts  # pyright: ignore[reportPrivateUsage]

    # The provider's own key wins; the others come from the general setting.
    assert timeouts_of("slow/m") == StreamTimeouts(first_event=900, idle=30)
    assert timeouts_of("ollama/m") == StreamTimeouts(first_event=600, idle=30)


def test_stream_timeouts_are_positive_seconds(scopes: Scopes) -> None:
    scopes.write("user", {"streamTimeouts": {"idle": 0, "firstEvent": "60", "other": 1}})
    with pytest.raises(SettingsError) as caught:
        scopes.load()
    message = str(caught.value)
    assert "streamTimeouts.idle: must be a number greater than 0" in message
    assert "streamTimeouts.firstEvent: must be a number greater than 0" in message
    assert "streamTimeouts.other: unknown key" in message


def test_mcp_waits_merge_by_key_from_every_scope(scopes: Scopes) -> None:
    # A wait runs and sends nothing: an untrusted project's file sets it too.
    scopes.write("user", {"mcp": {"startupWait": 2, "toolTimeout": 120}})
    scopes.write("project", {"mcp": {"startupWait": 0, "startupTimeout": 45}})
    settings = scopes.load()
    mcp = settings.mcp
    assert (mcp.startup_wait, mcp.startup_timeout, mcp.tool_timeout) == (0, 45, 120)
    assert not settings.ignored and not settings.trusted


def test_mcp_waits_are_seconds(scopes: Scopes) -> None:
    scopes.write(
        "user", {"mcp": {"startupWait": -1, "startupTimeout": 0, "toolTimeout": True, "x": 1}}
    )
    with pytest.raises(SettingsError) as caught:
        scopes.load()
    message = str(caught.value)
    assert "mcp.startupWait: must be a number greater than or equal to 0" in message
    assert "mcp.startupTimeout: must be a number greater than 0" in message
    assert "mcp.toolTimeout: must be a number greater than 0" in message
    assert "mcp.x: unknown key" in message


def test_a_repository_can_lower_the_cache_setting_never_raise_it(scopes: Scopes) -> None:
    assert scopes.load().cache == "5m"
    scopes.write("project", {"cache": "1h"})  # the vendor would keep the prompts longer
    settings = scopes.load()
    assert (settings.cache, settings.ignored.cache) == ("5m", "1h")
    assert "cache 1h" in settings.ignored.notice(scopes.cwd)
    scopes.write("project", {"cache": "off"})
    assert scopes.load().cache == "off" and not scopes.load().ignored
    scopes.write("user", {"cache": "off"})
    scopes.write("project", {"cache": "5m"})
    assert scopes.load().cache == "off"
    scopes.trust()
    scopes.write("project", {"cache": "1h"})
    assert scopes.load().cache == "1h"


def test_the_cache_setting_is_one_of_its_values(scopes: Scopes) -> None:
    scopes.write("user", {"cache": "10m"})
    with pytest.raises(SettingsError) as caught:
        scopes.load()
    assert "cache: must be one of 'off', '5m', '1h'" in str(caught.value)
