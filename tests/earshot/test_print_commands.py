"""Slash commands in print mode: a `-p` prompt that is exactly a command runs it on the session, as
an ACP prompt would (`agent.commands.slash`), in process against a scripted model."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from earshot.print_mode import PrintOptions, run_print
from sessions import Entry, LeafMoveEntry, MessageEntry, ModelChangeEntry, SessionStore
from tests.earshot.support import Env, make_env


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    where = make_env(tmp_path)
    for name, value in where.environ().items():
        monkeypatch.setenv(name, value)
    return where


def script(env: Env, *texts: str) -> None:
    path = env.root / "script.json"
    path.write_text(json.dumps({"turns": [{"text": text} for text in texts]}), encoding="utf-8")
    env.write_settings(
        {
            "providers": {"scripted-test": {"api": "scripted", "script": str(path)}},
            "model": "scripted-test/anything",
        }
    )


def run(env: Env, prompt: str, **options: Any) -> tuple[int, str, list[dict[str, Any]]]:
    out, err = io.StringIO(), io.StringIO()
    code = run_print(
        PrintOptions(prompt=prompt, cwd=env.workspace, output_format="json", **options),
        environ=env.environ(),
        stdout=out,
        stderr=err,
    )
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    return code, err.getvalue(), lines


def session_id(lines: list[dict[str, Any]]) -> str:
    return next(line["session_id"] for line in lines if line["kind"] == "session")


def stored(env: Env, session: str) -> tuple[list[Entry], list[str]]:
    """The session file's entries, and its request history's texts (read in this process)."""

    async def read() -> tuple[list[Entry], list[str]]:
        opened = await SessionStore(env.data_home / "earshot" / "sessions").open(session)
        try:
            return list(opened.entries), [message.text for message in opened.history()]
        finally:
            await opened.aclose()

    return anyio.run(read)


def test_clear_starts_a_resumed_session_over(env: Env) -> None:
    script(env, "Noted: blue.")
    code, err, first = run(env, "Remember: my colour is blue.")
    assert code == 0, err
    session = session_id(first)

    code, err, cleared = run(env, "/clear", resume=session)
    assert code == 0, err
    result = cleared[-1]
    assert result["kind"] == "result" and result["exit_code"] == 0
    assert result["text"] == "Cleared: the next prompt starts a fresh conversation."
    # The list emptied (no plan had started: its id is empty).
    assert {"kind": "todos", "items": [], "plan_id": ""} in cleared
    assert not any(line["kind"] == "turn_start" for line in cleared)  # no model turn

    script(env, "I know of no colour.")  # each run plays its script from the start
    code, err, after = run(env, "What colour did I say?", resume=session)
    assert code == 0, err
    assert after[-1]["text"] == "I know of no colour."
    _, history = stored(env, session)
    assert history == ["What colour did I say?", "I know of no colour."]


def test_clear_rewinds_the_transcript_and_keeps_everything(env: Env) -> None:
    script(env, "Noted: blue.")
    _, _, first = run(env, "Remember: my colour is blue.")
    session = session_id(first)
    code, err, _ = run(env, "/clear", resume=session)
    assert code == 0, err
    found, history = stored(env, session)
    assert history == []
    texts = [e.message.text for e in found if isinstance(e, MessageEntry)]
    assert texts == ["Remember: my colour is blue.", "Noted: blue."]  # nothing deleted
    rewind = next(i for i, e in enumerate(found) if isinstance(e, LeafMoveEntry))
    assert any(isinstance(e, ModelChangeEntry) for e in found[rewind:])  # the model carried over


def test_mode_and_model_commands_answer_without_calling_the_model(env: Env) -> None:
    script(env)  # no turn: a model call would fail the run
    code, err, lines = run(env, "/mode plan")
    assert code == 0, err
    assert lines[-1]["text"] == "Mode: plan."
    assert {"kind": "mode_changed", "mode": "plan"} in lines
    code, err, lines = run(env, "/model")
    assert code == 0, err
    assert lines[-1]["text"].startswith("Model: scripted-test/anything. Choices")
    assert "- scripted-test/anything (current)" in lines[-1]["text"]
    code, err, lines = run(env, "/mode warp")
    assert code == 0, err
    assert "Unknown mode `warp`" in lines[-1]["text"]


def test_a_compaction_with_nothing_to_compact_exits_1(env: Env) -> None:
    script(env)
    code, _, lines = run(env, "/compact")
    assert code == 1
    finished = next(line for line in lines if line["kind"] == "compaction_finished")
    assert finished["ok"] is False


def test_a_prompt_that_only_starts_with_a_slash_is_a_prompt(env: Env) -> None:
    script(env, "A path, then.")
    code, err, lines = run(env, "/etc/hosts: what is it for?")
    assert code == 0, err
    assert lines[-1]["text"] == "A path, then."


def test_permissions_and_user_commands_run_in_print_mode(env: Env) -> None:
    script(env, "Summary.")
    code, err, lines = run(env, "/permissions allow Bash(ls *)")
    assert code == 0, err
    [output] = [line for line in lines if line["kind"] == "command_output"]
    assert output["text"].startswith("Added `Bash(ls *)` to allow")
    assert output["data"]["permissions"]["scopes"][0]["scope"] == "session"
    code, err, lines = run(env, "/permissions")
    assert "- allow: `Bash(ls *)`" in lines[-1]["text"]
    commands = env.config_home / "earshot" / "commands"
    commands.mkdir(parents=True)
    (commands / "sum.md").write_text("Summarise $ARGUMENTS.", encoding="utf-8")
    code, err, lines = run(env, "/sum the diff")
    assert code == 0, err
    found, _ = stored(env, session_id(lines))
    texts = [e.message.text for e in found if isinstance(e, MessageEntry)]
    assert texts == ["Summarise the diff.", "Summary."]


def test_an_unknown_command_lists_the_commands_and_exits_2(env: Env) -> None:
    script(env)  # no model turn: the model is never called
    code, _, lines = run(env, "/bogus")
    assert code == 2
    [said] = [line["text"] for line in lines if line["kind"] == "command_output"]
    assert said.startswith("Unknown command `/bogus`.") and "\n- `/undo`: " in said
