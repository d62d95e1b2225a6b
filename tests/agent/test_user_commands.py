"""The user's Markdown slash commands (agent.commands.user, agent.commands.sources): `$ARGUMENTS`,
front matter, trust, and `allowed-tools`, which narrows a turn and never widens it."""

from __future__ import annotations

from pathlib import Path

import anyio

from agent.commands import CommandReply, parse_slash_command
from agent.commands.user import split_rules
from agent.events import CommandOutput, ToolCallFinished
from agent.session import AgentSession, SessionOptions, create_session
from providers.types import TextPart
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from tests.agent.loop_support import Answering, collect, env, of
from tests.agent.test_trust import Workspace


def command_file(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def user_dir(ws: Workspace) -> Path:
    return ws.config_home / "earshot" / "commands"


async def open_session(
    tmp_path: Path, ws: Workspace, model: ScriptedModel, interaction: Answering, mode: str = "ask"
) -> AgentSession:
    where = env(tmp_path)
    return await create_session(
        store=where.store,
        cwd=ws.cwd,
        options=SessionOptions(model_name="scripted/test", mode=mode),  # type: ignore[arg-type]
        model_factory=lambda name: model,
        settings=ws.load(),
        interaction=interaction,
        data_dir=where.data,
    )


async def run(session: AgentSession, text: str) -> list[object]:
    extras = [command.name for command in session.commands.all(session.skill_names)]
    call = parse_slash_command(text, session.skill_names, extras)
    assert call is not None, f"{text} is not a command"
    return list(await collect(session.run_command(call)))


def last_user_text(model: ScriptedModel) -> str:
    message = model.requests[-1].messages[-1]
    return "".join(part.text for part in message.parts if isinstance(part, TextPart))


async def test_a_user_command_sends_its_text_with_the_arguments(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    command_file(
        user_dir(ws),
        "review",
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS closely.\n",
    )
    command_file(user_dir(ws), "plain", "Summarise the repository.\n")
    model = ScriptedModel([ScriptedTurn(text="reviewed"), ScriptedTurn(text="summarised")])
    session = await open_session(tmp_path, ws, model, Answering())
    try:
        commands = {c.name: c for c in session.commands.all()}
        assert commands["review"].description == "Review a file"
        assert commands["review"].hint == "FILE"
        await run(session, "/review src/app.py")
        assert last_user_text(model) == "Review src/app.py closely.\n"
        await run(session, "/plain only the tests")
        assert last_user_text(model) == "Summarise the repository.\n\nArguments: only the tests"
        # A file added between turns is a command at the next one.
        command_file(user_dir(ws), "later", "Later.")
        assert "later" in [c.name for c in session.commands.all()]
    finally:
        await session.aclose()


async def test_project_commands_load_only_in_a_trusted_workspace_and_never_shadow_the_users(
    tmp_path: Path,
) -> None:
    ws = Workspace(tmp_path)
    project_dir = ws.cwd / ".earshot" / "commands"
    command_file(project_dir, "deploy", "Deploy everything.")
    command_file(project_dir, "review", "Project review.")
    command_file(user_dir(ws), "review", "My review.")
    model = ScriptedModel([])
    session = await open_session(tmp_path, ws, model, Answering())
    try:
        assert [c.name for c in session.commands.all()] == ["review"]
    finally:
        await session.aclose()
    ws.trust()
    session = await open_session(tmp_path, ws, model, Answering())
    try:
        names = {c.name: c for c in session.commands.all()}
        assert set(names) == {"deploy", "review"}
        reply = await names["review"].run("")
        assert reply.prompt == "My review."
    finally:
        await session.aclose()


async def test_allowed_tools_narrow_the_turn_even_in_yolo(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    target = ws.cwd / "touched"
    command_file(user_dir(ws), "look", "---\nallowed-tools: Read, Grep\n---\nLook around.")
    bash = ScriptedCall(name="bash", id="b", arguments={"command": f"touch {target}"})
    model = ScriptedModel([ScriptedTurn(tool_calls=[bash]), ScriptedTurn(text="done")])
    session = await open_session(tmp_path, ws, model, Answering(), mode="yolo")
    try:
        events = await run(session, "/look")
    finally:
        await session.aclose()
    [finished] = of(ToolCallFinished, events)  # type: ignore[arg-type]
    assert finished.status == "denied"
    assert "not among the tools the running command allows" in str(finished.result)
    assert not target.exists()


async def test_allowed_tools_never_allow_by_themselves(tmp_path: Path) -> None:
    """A project command saying `allowed-tools: Bash` in a trusted workspace: the bash call
    still asks in `ask` mode, and after the command the narrowing is gone."""
    ws = Workspace(tmp_path)
    ws.trust()
    target = ws.cwd / "touched"
    command_file(ws.cwd / ".earshot" / "commands", "go", "---\nallowed-tools: Bash\n---\nGo.")
    bash = ScriptedCall(name="bash", id="b", arguments={"command": f"touch {target}"})
    model = ScriptedModel([ScriptedTurn(tool_calls=[bash]), ScriptedTurn(text="done")])
    interaction = Answering("reject_once")
    session = await open_session(tmp_path, ws, model, interaction)
    try:
        await run(session, "/go")
        assert session.permissions.book is not None and session.permissions.book.only is None
    finally:
        await session.aclose()
    assert [prompt.tool_name for prompt in interaction.prompts] == ["bash"]
    assert not target.exists()


async def test_a_command_model_applies_to_its_turn_only(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    command_file(user_dir(ws), "fast", "---\nmodel: scripted/fast\n---\nQuick one.")
    command_file(user_dir(ws), "broken", "---\nallowed-tools: Bash(\n---\nNo.")
    used: list[str] = []
    model = ScriptedModel([ScriptedTurn(text="quick")])

    def build(name: str) -> ScriptedModel:
        used.append(name)
        return model

    where = env(tmp_path)
    session = await create_session(
        store=where.store,
        cwd=ws.cwd,
        options=SessionOptions(model_name="scripted/test"),
        model_factory=build,
        settings=ws.load(),
        interaction=Answering(),
        data_dir=where.data,
    )
    try:
        await run(session, "/fast")
        assert session.model_name == "scripted/test"
        assert used == ["scripted/test", "scripted/fast", "scripted/test"]
        [said] = of(CommandOutput, await run(session, "/broken"))  # type: ignore[arg-type]
        assert "allowed tools" in said.text
    finally:
        await session.aclose()


def test_allowed_tools_split_at_top_level_commas() -> None:
    assert split_rules("Bash(git add, git commit), Read") == ["Bash(git add, git commit)", "Read"]
    assert split_rules('["Read", "Grep"]') == ["Read", "Grep"]


class _Slow:
    """A command that takes its time preparing its prompt (an MCP server asked for it)."""

    name = "slow"
    description = "slow"
    hint = None

    def __init__(self) -> None:
        self.started = anyio.Event()

    async def run(self, argument: str) -> CommandReply:
        self.started.set()
        await anyio.sleep_forever()
        raise AssertionError("not reached")


async def test_cancel_stops_a_command_still_preparing_its_turn(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    slow = _Slow()
    model = ScriptedModel([ScriptedTurn(text="never")])
    where = env(tmp_path)
    session = await create_session(
        store=where.store,
        cwd=ws.cwd,
        options=SessionOptions(model_name="scripted/test", command_sources=[lambda: [slow]]),
        model_factory=lambda name: model,
        settings=ws.load(),
        interaction=Answering(),
        data_dir=where.data,
    )
    events: list[object] = []
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tasks:

                async def consume() -> None:
                    events.extend(await run(session, "/slow now"))

                tasks.start_soon(consume)
                await slow.started.wait()
                session.cancel()
    finally:
        await session.aclose()
    [output] = of(CommandOutput, events)  # type: ignore[arg-type]
    assert output.text == "/slow was cancelled."
    assert model.requests == []
