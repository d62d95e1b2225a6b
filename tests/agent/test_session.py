"""The session around the loop: prompts, vision, titles, model and mode changes, resume, plan,
replay, undo, settings-driven permissions and hooks."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from agent.events import (
    AgentEvent,
    CompactionFinished,
    ModeChanged,
    ModelChanged,
    Notice,
    TextChunk,
    TitleChanged,
    TodosChanged,
    ToolCallFinished,
    ToolCallReady,
    ToolCallStarted,
    TurnEnded,
    UserMessageAdded,
)
from agent.session import ModelUnavailable, SessionOptions, UnsupportedPrompt, create_session
from agent.settings import load_settings, set_directory_trust
from agent.turn import title_from
from providers.catalog import ModelCatalog, ModelOverride
from providers.model import Model
from providers.types import ImagePart, TextPart
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import ModeChangeEntry, ModelChangeEntry, TitleEntry, UndoSnapshotEntry
from tests.agent.loop_support import (
    Answering,
    Board,
    collect,
    env,
    make_session,
    of,
    results_of,
    waiting_tool,
)

PIXEL = ImagePart(media_type="image/png", data="iVBORw0KGgo=")


def _catalog() -> ModelCatalog:
    return ModelCatalog.load(
        overrides={
            "scripted/blind": ModelOverride(vision=False),
            "scripted/seeing": ModelOverride(vision=True),
        }
    )


async def test_an_image_for_a_model_without_vision_is_refused_before_anything(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([ScriptedTurn(text="x")], model_id="blind")
    session = await make_session(
        env(tmp_path), model, catalog=_catalog(), model_name="scripted/blind"
    )
    with pytest.raises(UnsupportedPrompt, match="does not accept images"):
        session.run_turn([TextPart(text="what is this?"), PIXEL])
    assert session.history() == []
    assert model.requests == []
    assert not session.running
    await session.aclose()


async def test_images_go_to_vision_models_and_to_models_nobody_knows(tmp_path: Path) -> None:
    for model_id in ("seeing", "mystery"):
        model = ScriptedModel([ScriptedTurn(text="a pixel")], model_id=model_id)
        session = await make_session(
            env(tmp_path / model_id),
            model,
            catalog=_catalog(),
            model_name=f"scripted/{model_id}",
        )
        events = await collect(session.run_turn([TextPart(text="look"), PIXEL]))
        assert events[-1] == TurnEnded(reason="end_turn")
        assert model.requests[0].messages[0].parts[1] == PIXEL
        await session.aclose()


def test_titles_come_from_the_first_line_trimmed() -> None:
    assert title_from("  fix the bug\nin parser.py") == "fix the bug"
    long = "please refactor the configuration loader so that it reads every scope lazily"
    title = title_from(long)
    assert title is not None and len(title) <= 61 and title.endswith("…")
    assert title.startswith("please refactor the configuration loader so that")
    assert title_from("   \n  ") is None


async def test_the_first_prompt_titles_the_session_once(tmp_path: Path) -> None:
    where = env(tmp_path)
    session = await make_session(where, [ScriptedTurn(text="a"), ScriptedTurn(text="b")])
    first = await collect(session.run_turn("Add a --verbose flag\nand tests"))
    second = await collect(session.run_turn("now document it"))
    assert of(TitleChanged, first) == [TitleChanged(title="Add a --verbose flag")]
    assert of(TitleChanged, second) == []
    assert session.title == "Add a --verbose flag"
    reopened = await where.store.open(session.id)
    assert reopened.title == "Add a --verbose flag"
    assert sum(isinstance(e, TitleEntry) for e in reopened.entries) == 1
    await reopened.aclose()
    await session.aclose()


async def test_switching_model_mid_session_sends_the_next_call_to_the_new_model(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    models = {
        "scripted/one": ScriptedModel([ScriptedTurn(text="from one")], model_id="one"),
        "alt/two": ScriptedModel([ScriptedTurn(text="from two")], model_id="two"),
    }
    session = await make_session(
        where, models["scripted/one"], factory=models.__getitem__, model_name="scripted/one"
    )
    await collect(session.run_turn("hi"))
    await session.set_model("alt/two", "high")
    events = await collect(session.run_turn("again"))

    assert session.model_name == "alt/two" and session.reasoning_effort == "high"
    request = models["alt/two"].requests[0]
    assert request.reasoning_effort == "high"
    assert [m.text for m in request.messages] == ["hi", "from one", "again"]
    assert of(TextChunk, events)[0].text == "from two"
    with pytest.raises(ModelUnavailable, match="nope/none"):
        await session.set_model("nope/none")
    assert session.model_name == "alt/two"
    reopened = await where.store.open(session.id)
    assert reopened.model == "alt/two" and reopened.reasoning_effort == "high"
    changes = [e for e in reopened.entries if isinstance(e, ModelChangeEntry)]
    assert [c.model for c in changes] == ["scripted/one", "alt/two"]
    await reopened.aclose()
    await session.aclose()


async def test_model_and_mode_changes_during_a_turn_are_announced(tmp_path: Path) -> None:
    board = Board()
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="probe", arguments={"key": "a"})]),
            ScriptedTurn(text="ok"),
        ]
    )
    session = await make_session(env(tmp_path), model, tools=[waiting_tool(board)])
    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        async for event in session.run_turn("go"):
            events.append(event)
            if event.kind == "tool_call_running":
                await session.set_mode("auto")
                await session.set_model("scripted/test", "low")
    assert ModeChanged(mode="auto") in events
    assert ModelChanged(model="scripted/test", reasoning_effort="low") in events
    assert model.requests[1].reasoning_effort == "low"
    await session.aclose()


async def test_an_unbuildable_model_is_model_unavailable(tmp_path: Path) -> None:
    where = env(tmp_path)

    def factory(name: str) -> Model:
        raise LookupError("no credentials for acme (set ACME_API_KEY)")

    with pytest.raises(ModelUnavailable, match="ACME_API_KEY"):
        await create_session(
            store=where.store,
            cwd=where.cwd,
            options=SessionOptions(model_name="acme/x"),
            model_factory=factory,
        )


async def test_resume_restores_history_model_mode_title_and_plan_but_not_grants(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    board = Board()
    touch = waiting_tool(board, "touch", read_only=False)
    interaction = Answering("allow_session")
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="touch", arguments={"key": "w1"})]),
            ScriptedTurn(tool_calls=[ScriptedCall(name="touch", arguments={"key": "w1"})]),
            ScriptedTurn(
                tool_calls=[
                    ScriptedCall(
                        name="todo",
                        arguments={"todos": [{"content": "step one", "status": "in_progress"}]},
                    )
                ]
            ),
            ScriptedTurn(text="first done"),
        ]
    )
    session = await make_session(where, model, tools=[touch], interaction=interaction, builtin=True)
    await session.set_mode("accept-edits")
    await session.set_mode("ask")
    events = await collect(session.run_turn("Do the thing"))
    assert len(interaction.prompts) == 1  # the session grant covered the second call
    assert of(TodosChanged, events)[0].items[0].content == "step one"
    history = session.history()
    await session.aclose()

    later_model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="touch", arguments={"key": "w1"})]),
            ScriptedTurn(text="second done"),
        ]
    )
    interaction2 = Answering("allow_once")
    resumed = await make_session(
        where,
        later_model,
        tools=[touch],
        interaction=interaction2,
        resume_id=session.id,
        builtin=True,
        mode="yolo",
        model_name="scripted/other",
    )
    assert resumed.id == session.id
    assert resumed.history() == history
    assert resumed.model_name == "scripted/test"
    assert resumed.mode == "ask"
    assert resumed.title == "Do the thing"
    assert [p.content for p in resumed.todos] == ["step one"]
    await collect(resumed.run_turn("more"))
    assert len(interaction2.prompts) == 1  # asked again: grants are not restored
    assert later_model.requests[0].messages[: len(history)] == history
    await resumed.aclose()


async def test_replay_events_mirror_the_live_run(tmp_path: Path) -> None:
    board = Board()
    model = ScriptedModel(
        [
            ScriptedTurn(
                text="looking", tool_calls=[ScriptedCall(name="probe", arguments={"key": "k"})]
            ),
            ScriptedTurn(text="found it"),
        ]
    )
    session = await make_session(env(tmp_path), model, tools=[waiting_tool(board)])
    live = await collect(session.run_turn("find k"))
    replayed = session.replay_events()

    kinds = [e.kind for e in replayed]
    assert kinds == [
        "model_changed",
        "mode_changed",
        "user_message",
        "title_changed",
        "text",
        "tool_call_started",
        "tool_call_ready",
        "tool_call_finished",
        "text",
    ]
    live_text = of(TextChunk, live)
    replay_text = of(TextChunk, replayed)
    assert [(c.text, c.message_id) for c in replay_text] == [
        (c.text, c.message_id) for c in live_text
    ]
    assert of(ToolCallReady, replayed)[0].ui.title == "probe k"
    assert of(ToolCallStarted, replayed)[0].call_id == "call_1_1"
    assert of(ToolCallFinished, replayed)[0].result == of(ToolCallFinished, live)[0].result
    assert of(UserMessageAdded, replayed)[0].text == "find k"
    await session.aclose()


async def test_mutating_batches_are_snapshotted_and_undo_restores_them(tmp_path: Path) -> None:
    where = env(tmp_path)
    target = where.cwd / "notes.txt"
    target.write_text("original\n", encoding="utf-8")
    model = ScriptedModel(
        [
            ScriptedTurn(
                tool_calls=[
                    ScriptedCall(name="read", arguments={"path": "notes.txt"}),
                    ScriptedCall(
                        name="write", arguments={"path": "notes.txt", "content": "changed\n"}
                    ),
                ]
            ),
            ScriptedTurn(text="written"),
        ]
    )
    session = await make_session(where, model, builtin=True, interaction=Answering(), mode="yolo")
    events = await collect(session.run_turn("rewrite notes"))
    assert [f.status for f in of(ToolCallFinished, events)] == ["completed", "completed"]
    assert target.read_text(encoding="utf-8") == "changed\n"
    reopened = await where.store.open(session.id)
    snapshots = [e for e in reopened.entries if isinstance(e, UndoSnapshotEntry)]
    assert len(snapshots) == 1 and snapshots[0].paths == ["notes.txt"]
    await reopened.aclose()

    message = await session.undo()
    assert target.read_text(encoding="utf-8") == "original\n"
    assert "notes.txt" in message
    await session.aclose()


async def test_settings_rules_and_hooks_reach_the_loop(tmp_path: Path) -> None:
    where = env(tmp_path)
    settings_dir = where.cwd / ".earshot"
    settings_dir.mkdir()
    (settings_dir / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {"deny": ["Write(secret.txt)"], "allow": ["Write"]},
                "hooks": {
                    "pre_tool_use": [
                        {"matcher": "probe", "command": "echo 'probes are off' >&2; exit 2"}
                    ],
                    "user_prompt_submit": [
                        {
                            "command": "grep -q forbidden && { echo 'no forbidden words' >&2;"
                            " exit 2; } || exit 0"
                        }
                    ],
                },
            }
        ),
        encoding="utf-8",
    )
    # Repository settings may run hooks only in a trusted workspace (agent.settings.trust).
    set_directory_trust(where.cwd, True, config_home=tmp_path / "config")
    settings = load_settings(where.cwd, environ={}, config_home=tmp_path / "config")
    board = Board()
    model = ScriptedModel(
        [
            ScriptedTurn(
                tool_calls=[
                    ScriptedCall(name="write", arguments={"path": "secret.txt", "content": "x"}),
                    ScriptedCall(name="write", arguments={"path": "open.txt", "content": "y"}),
                    ScriptedCall(name="probe", arguments={"key": "p"}),
                ]
            ),
            ScriptedTurn(text="done"),
        ]
    )
    interaction = Answering()
    session = await create_session(
        store=where.store,
        cwd=where.cwd,
        options=SessionOptions(model_name="scripted/test", extra_tools=[waiting_tool(board)]),
        model_factory=lambda name: model,
        settings=settings,
        interaction=interaction,
        data_dir=where.data,
    )
    blocked = await collect(session.run_turn("say something forbidden"))
    assert blocked[-1] == TurnEnded(reason="refusal")
    assert "no forbidden words" in of(Notice, blocked)[0].message
    assert session.history() == []

    await collect(session.run_turn("write the files"))
    results = results_of(session.history())
    assert (
        results["call_1_1"].is_error
        and "denied by rule Write(secret.txt)" in results["call_1_1"].text
    )
    assert not (where.cwd / "secret.txt").exists()
    assert not results["call_1_2"].is_error
    assert (where.cwd / "open.txt").read_text(encoding="utf-8") == "y"
    assert results["call_1_3"].is_error and "probes are off" in results["call_1_3"].text
    assert board.log == []
    assert interaction.prompts == []
    await session.aclose()


async def test_mode_changes_are_recorded(tmp_path: Path) -> None:
    where = env(tmp_path)
    session = await make_session(where, [ScriptedTurn(text="x")])
    await session.set_mode("plan")
    with pytest.raises(ValueError, match="unknown mode"):
        await session.set_mode("reckless")  # pyright: ignore[reportArgumentType]
    reopened = await where.store.open(session.id)
    assert [e.mode for e in reopened.entries if isinstance(e, ModeChangeEntry)] == ["ask", "plan"]
    assert reopened.mode == "plan"
    await reopened.aclose()
    await session.aclose()


async def test_compact_reports_that_it_is_not_available_yet(tmp_path: Path) -> None:
    session = await make_session(env(tmp_path), [ScriptedTurn(text="x")])
    events = [event async for event in session.compact()]
    assert [e.kind for e in events] == ["compaction_started", "compaction_finished"]
    finished = events[-1]
    assert isinstance(finished, CompactionFinished) and finished.ok is False
    await session.aclose()


async def test_the_default_system_prompt_names_cwd_tools_and_rules(tmp_path: Path) -> None:
    where = env(tmp_path)
    model = ScriptedModel([ScriptedTurn(text="x")])
    session = await make_session(where, model, builtin=True)
    await collect(session.run_turn("hi"))
    system = model.requests[0].system
    assert str(where.cwd.resolve()) in system
    assert "Read a file before you edit it" in system and "todo" in system
    assert "task" in [spec.name for spec in model.requests[0].tools]
    await session.aclose()


async def test_post_tool_use_and_stop_hooks_run_with_the_results(tmp_path: Path) -> None:
    where = env(tmp_path)
    log = tmp_path / "hooks.log"
    settings_dir = where.cwd / ".earshot"
    settings_dir.mkdir()
    record = f"cat >> {log}; echo >> {log}"
    (settings_dir / "settings.json").write_text(
        json.dumps(
            {"hooks": {"post_tool_use": [{"command": record}], "stop": [{"command": record}]}}
        ),
        encoding="utf-8",
    )
    # Repository settings may run hooks only in a trusted workspace (agent.settings.trust).
    set_directory_trust(where.cwd, True, config_home=tmp_path / "config")
    settings = load_settings(where.cwd, environ={}, config_home=tmp_path / "config")
    board = Board()
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="probe", arguments={"key": "a"})]),
            ScriptedTurn(text="done"),
        ]
    )
    session = await create_session(
        store=where.store,
        cwd=where.cwd,
        options=SessionOptions(model_name="scripted/test", extra_tools=[waiting_tool(board)]),
        model_factory=lambda name: model,
        settings=settings,
        data_dir=where.data,
    )
    await collect(session.run_turn("go"))
    payloads = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    post = next(p for p in payloads if p.get("tool_name") == "probe")
    assert post["result"] == "done a" and post["is_error"] is False
    assert any(p.get("reason") == "end_turn" for p in payloads)
    await session.aclose()
