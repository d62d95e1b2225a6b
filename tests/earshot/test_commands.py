"""`earshot sessions`, `models`, `undo`, `--version` and `--help` as subprocesses, and the model
choice in `earshot.compose`."""

from __future__ import annotations

from pathlib import Path

import pytest

from earshot.compose import Composition, NoCredentials
from tests.earshot.support import Env, earshot, make_env, text_reply, tool_reply
from tests.loopback import loopback


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


async def test_version_and_help(env: Env) -> None:
    version = await earshot(env, "--version")
    assert version.code == 0 and version.stdout.startswith("earshot ")
    helped = await earshot(env, "--help")
    assert helped.code == 0
    for word in ("--stdio", "-p", "sessions", "models", "undo", "--permission-mode"):
        assert word in helped.stdout
    bad = await earshot(env, "--permission-mode", "sometimes", "-p", "x")
    assert bad.code == 2


async def test_sessions_list_and_show(env: Env) -> None:
    (env.workspace / "a.txt").write_text("alpha\n", encoding="utf-8")
    with loopback(
        tool_reply(("call_1", "read", {"path": "a.txt"})), text_reply("It says alpha.")
    ) as server:
        env.local_provider(server.url)
        run = await earshot(env, "--output-format", "json", "-p", "Summarise a.txt for me")
    assert run.code == 0, run.stderr
    session_id = run.lines()[0]["session_id"]

    listed = await earshot(env, "sessions", "list")
    assert listed.code == 0
    assert session_id in listed.stdout and "Summarise a.txt for me" in listed.stdout

    other = env.root / "elsewhere"
    other.mkdir()
    elsewhere = await earshot(env, "--cwd", str(other), "sessions", "list")
    assert session_id not in elsewhere.stdout
    everywhere = await earshot(env, "--cwd", str(other), "sessions", "list", "--all")
    assert session_id in everywhere.stdout and str(env.workspace) in everywhere.stdout

    shown = await earshot(env, "sessions", "show", session_id)
    assert shown.code == 0
    text = shown.stdout
    assert "> Summarise a.txt for me" in text
    assert "→ read" in text and "alpha" in text
    assert text.index("> Summarise") < text.index("→ read") < text.index("It says alpha.")
    missing = await earshot(env, "sessions", "show", "nope")
    assert missing.code == 2


async def test_models_marks_credentialed_providers(env: Env) -> None:
    run = await earshot(env, "models")
    assert run.code == 0
    anthropic = next(line for line in run.stdout.splitlines() if " anthropic " in line)
    assert not anthropic.startswith("✓") and "ANTHROPIC_API_KEY" in anthropic
    keyed = await earshot(env, "models", extra_env={"ANTHROPIC_API_KEY": "test-key"})
    anthropic = next(line for line in keyed.stdout.splitlines() if " anthropic " in line)
    assert anthropic.startswith("✓")
    assert "test-key" not in keyed.stdout
    assert "default model: anthropic/claude-sonnet-4-5" in keyed.stdout
    listed = await earshot(env, "models", "--provider", "anthropic")
    assert listed.code == 0 and "anthropic/claude-sonnet-4-5 (default)" in listed.stdout
    unknown = await earshot(env, "models", "--provider", "nosuch")
    assert unknown.code == 2


async def test_undo_restores_the_last_batch_of_the_newest_session(env: Env) -> None:
    target = env.workspace / "app.py"
    target.write_text("print('old')\n", encoding="utf-8")
    with loopback(
        tool_reply(("call_1", "read", {"path": "app.py"})),
        tool_reply(("call_2", "write", {"path": "app.py", "content": "print('new')\n"})),
        text_reply("Rewritten."),
    ) as server:
        env.local_provider(server.url)
        run = await earshot(env, "--permission-mode", "accept-edits", "-p", "rewrite app.py")
    assert run.code == 0, run.stderr
    assert target.read_text(encoding="utf-8") == "print('new')\n"
    undone = await earshot(env, "undo")
    assert undone.code == 0, undone.stdout + undone.stderr
    assert target.read_text(encoding="utf-8") == "print('old')\n"
    again = await earshot(env, "undo")
    assert again.code == 1  # nothing left to undo


async def test_undo_without_a_session(env: Env) -> None:
    run = await earshot(env, "undo")
    assert run.code == 1 and "no session" in run.stdout


# ------------------------------------------------------------------------- model choice


def composition(env: Env, **environ: str) -> Composition:
    return Composition.load(env.workspace, environ=env.environ(**environ))


def test_model_choice_order(env: Env) -> None:
    keyed = composition(env, OPENAI_API_KEY="test-key", OPENROUTER_API_KEY="test-key")
    pick = keyed.pick_model()
    assert pick.name == "openai/gpt-5" and "OPENAI_API_KEY" in pick.reason
    both = composition(env, OPENAI_API_KEY="test-key", ANTHROPIC_API_KEY="test-key")
    assert both.pick_model().name == "anthropic/claude-sonnet-4-5"
    env.write_settings({"model": "google/gemini-2.5-pro"})
    assert composition(env, OPENAI_API_KEY="k").pick_model().reason == "settings"
    from_env = composition(env, EARSHOT_MODEL="openai/o4-mini").pick_model()
    assert (from_env.name, from_env.reason) == ("openai/o4-mini", "EARSHOT_MODEL")
    flagged = composition(env, EARSHOT_MODEL="openai/o4-mini").pick_model("xai/grok-4.3")
    assert (flagged.name, flagged.reason) == ("xai/grok-4.3", "--model")


def test_no_credentials_names_the_variables(env: Env) -> None:
    bare = composition(env)
    with pytest.raises(NoCredentials) as raised:
        bare.pick_model()
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY"):
        assert variable in str(raised.value)
    assert bare.default_model().name == "anthropic/claude-sonnet-4-5"  # for ACP's auth message
    assert bare.check_credentials("openai/gpt-5") is not None
    assert "OPENAI_API_KEY" in (bare.check_credentials("openai/gpt-5") or "")


async def test_stdio_with_other_arguments_answers_or_refuses_instead_of_serving(env: Env) -> None:
    # stdin is left open and empty: a server started by mistake would wait on it until killed.
    helped = await earshot(env, "--stdio", "--help")
    assert helped.code == 0 and "--stdio" in helped.stdout
    bogus = await earshot(env, "--stdio", "--bogus")
    assert bogus.code == 2 and "--bogus" in bogus.stderr
    extra = await earshot(env, "--stdio", "--cwd", str(env.workspace))
    assert extra.code == 2 and "take no other arguments" in extra.stderr
    acp_help = await earshot(env, "acp", "--help")
    assert acp_help.code == 0 and "usage: earshot acp" in acp_help.stdout
