"""Provider credentials never reach the commands the model runs or the hooks: `env` in a bash
call must not put a key into the result, the transcript or a hook's environment."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent.local import LocalProcesses
from agent.settings import HookRule
from agent.tool_env import credential_variables, tool_environment
from agent.turn import HookRunner
from providers.registry import all_providers
from providers.types import ToolResultPart
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from tests.agent.loop_support import collect, env, make_session, results_of

SECRET = "test-secret-value"


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET + "-anthropic")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", SECRET + "-token")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET + "-openai")
    monkeypatch.setenv("GROQ_API_KEY", SECRET + "-groq")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/path/to/adc.json")
    monkeypatch.setenv("EARSHOT_TEST_VISIBLE", "still-here")


def test_every_builtin_provider_key_variable_is_a_credential() -> None:
    names = credential_variables()
    for spec in all_providers():
        assert set(spec.env) <= names and set(spec.token_env) <= names, spec.id
    assert "ANTHROPIC_AUTH_TOKEN" in names
    # A path to a credentials file, which commands (gcloud, SDKs) need: kept.
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in names


def test_tool_environment_strips_keys_and_keeps_the_rest() -> None:
    base = {
        "PATH": "/bin",
        "OPENAI_API_KEY": "sk-x",
        "openai_api_key": "sk-lower",  # Windows treats names case-insensitively
        "GOOGLE_APPLICATION_CREDENTIALS": "/adc.json",
    }
    assert tool_environment(base) == {"PATH": "/bin", "GOOGLE_APPLICATION_CREDENTIALS": "/adc.json"}
    assert tool_environment(base, extra={"X": "1"}) == {
        "PATH": "/bin",
        "GOOGLE_APPLICATION_CREDENTIALS": "/adc.json",
        "X": "1",
    }


@pytest.mark.usefixtures("keys")
async def test_env_in_a_bash_call_shows_no_key_in_the_result_or_the_transcript(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="bash", arguments={"command": "env"})]),
            ScriptedTurn(text="done"),
        ]
    )
    session = await make_session(where, model, builtin=True, mode="auto")
    await collect(session.run_turn("show me the environment"))
    result = results_of(session.history())["call_1_1"]
    assert not result.is_error
    assert "EARSHOT_TEST_VISIBLE=still-here" in result.text
    assert "GOOGLE_APPLICATION_CREDENTIALS=/path/to/adc.json" in result.text
    assert SECRET not in result.text
    assert "ANTHROPIC_API_KEY" not in result.text
    # What the model was sent, and what is on disk.
    sent = [
        part.text
        for message in model.requests[1].messages
        for part in message.parts
        if isinstance(part, ToolResultPart)
    ]
    assert sent and all(SECRET not in text for text in sent)
    path = session.transcript.stored.path if session.transcript.stored else None
    assert path is not None
    await session.aclose()
    transcript = path.read_text(encoding="utf-8")
    assert "EARSHOT_TEST_VISIBLE" in transcript
    assert SECRET not in transcript


@pytest.mark.usefixtures("keys")
async def test_local_processes_strip_keys_also_when_extra_variables_are_given(
    tmp_path: Path,
) -> None:
    processes = LocalProcesses()
    for extra in (None, {"EXTRA_VAR": "extra"}):
        result = await processes.run(
            "env", cwd=tmp_path, timeout=10, output_limit=100_000, env=extra
        )
        assert "EARSHOT_TEST_VISIBLE=still-here" in result.output
        assert SECRET not in result.output
        if extra:
            assert "EXTRA_VAR=extra" in result.output


@pytest.mark.usefixtures("keys")
async def test_hooks_run_without_the_keys(tmp_path: Path) -> None:
    out = tmp_path / "hook-env.txt"
    hook = HookRule(
        event="stop",
        command=f"env > {out}",
        matcher=None,
        timeout=None,
        scope="user",
        source=Path("/nowhere/settings.json"),
    )
    runner = HookRunner((hook,), cwd=tmp_path)
    with anyio.fail_after(10):
        await runner.stop(session_id="s1", reason="end_turn")
    seen = out.read_text(encoding="utf-8")
    assert "EARSHOT_HOOK=stop" in seen
    assert "EARSHOT_TEST_VISIBLE=still-here" in seen
    assert SECRET not in seen


def test_general_purpose_tokens_stay_for_the_users_own_tools() -> None:
    from agent.tool_env import tool_environment

    environment = tool_environment(
        {"GITHUB_TOKEN": "gh-value", "OPENAI_API_KEY": "sk-value", "PATH": "/bin"}
    )
    assert environment == {"GITHUB_TOKEN": "gh-value", "PATH": "/bin"}
