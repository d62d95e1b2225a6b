"""The sandbox in a session, with the scripted model and the real sandbox: what the model is told
when the sandbox stops a command, the user's "run outside the sandbox" (that call only), the
gate's explicit option, the fallback when no sandbox can run, and controls of ordinary work."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent.backends import Mode, PermissionAnswer, PermissionPrompt, Question, QuestionAnswer
from agent.events import AgentEvent, Notice, ToolCallFinished
from agent.session import AgentSession, SessionOptions, create_session
from agent.settings import SandboxConfig
from agent.settings.scopes import PermissionRule, Settings
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import SessionStore
from tests.agent.loop_support import collect, of
from tests.agent.sandbox_lab import Lab, make_lab, needs_linux, write_npm_test_script

pytestmark = needs_linux


@pytest.fixture
def lab(monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from make_lab(monkeypatch)


@dataclass
class User:
    """Answers each prompt with the first option whose id is in `picks` (else rejects once)."""

    picks: Sequence[str] = ()
    prompts: list[PermissionPrompt] = field(default_factory=lambda: [])

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self.prompts.append(prompt)
        for option in prompt.options:
            if option.id in self.picks:
                return PermissionAnswer(option_id=option.id)
        reject = next(o for o in prompt.options if o.kind == "reject_once")
        return PermissionAnswer(option_id=reject.id)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return QuestionAnswer(declined=True)


def bash(command: str, call_id: str = "c1") -> ScriptedTurn:
    return ScriptedTurn(
        tool_calls=[ScriptedCall(name="bash", arguments={"command": command}, id=call_id)]
    )


def rules(*allow: str, deny: Sequence[str] = ()) -> tuple[PermissionRule, ...]:
    made = [
        PermissionRule(list_name="allow", rule=r, scope="user", source=Path("u")) for r in allow
    ]
    made += [PermissionRule(list_name="deny", rule=r, scope="user", source=Path("u")) for r in deny]
    return tuple(made)


async def session(
    lab: Lab,
    turns: Sequence[ScriptedTurn],
    *,
    mode: Mode,
    user: User,
    settings: Settings | None = None,
) -> AgentSession:
    model = ScriptedModel([*turns, ScriptedTurn(text="done")])
    return await create_session(
        store=SessionStore(lab.base / "data" / "sessions"),
        cwd=lab.project,
        options=SessionOptions(model_name="scripted/test", mode=mode),
        model_factory=lambda name: model,
        settings=settings or Settings(),
        interaction=user,
        data_dir=lab.base / "data",
    )


async def run(agent: AgentSession, prompt: str = "go") -> list[AgentEvent]:
    events = await collect(agent.run_turn(prompt))
    return events


def result(events: Sequence[AgentEvent]) -> ToolCallFinished:
    [finished] = of(ToolCallFinished, events)
    return finished


def sandbox_of(finished: ToolCallFinished) -> object:
    raw = finished.raw_output
    return raw.get("sandbox") if isinstance(raw, dict) else None


# ------------------------------------------------------------------ a command the sandbox stops


async def test_a_stopped_command_says_so_and_the_user_may_run_it_outside(lab: Lab) -> None:
    target = lab.outside / "f"
    user = User(picks=("run_outside_sandbox",))
    # yolo: the gate lets everything run unasked; the sandbox still holds, and still asks.
    agent = await session(lab, [bash(f"echo x > {target}")], mode="yolo", user=user)
    events = await run(agent)
    finished = result(events)
    text = finished.result.text
    assert "Read-only file system" in text
    assert "The sandbox stopped this command" in text
    assert "The user approved running it again outside the sandbox" in text
    assert finished.status == "completed"
    assert finished.raw_output == {
        "exit_code": 0,
        "timed_out": False,
        "signal": None,
        "truncated": False,
        "terminal_id": None,
        "sandbox": "outside",
    }
    assert target.read_text(encoding="utf-8") == "x\n"
    [prompt] = user.prompts
    assert [(o.label, o.kind, o.unsandboxed) for o in prompt.options] == [
        ("Run it again OUTSIDE the sandbox, unconfined (this call only)", "allow_once", True),
        ("Don't: keep it in the sandbox", "reject_once", False),
    ]
    # Titled with the exact command, which it carries for the front end to show as it is.
    assert prompt.command == f"echo x > {target}"
    assert prompt.ui.title.startswith(f"echo x > {target}  # ")
    assert "Read-only file system" in prompt.reason
    await agent.aclose()


async def test_declining_leaves_the_failure_standing_and_covers_that_call_only(lab: Lab) -> None:
    target = lab.outside / "f"
    user = User()
    agent = await session(
        lab, [bash(f"echo x > {target}"), bash(f"echo y > {target}", "c2")], mode="yolo", user=user
    )
    events = await run(agent)
    first, second = of(ToolCallFinished, events)
    for finished in (first, second):
        assert finished.status == "failed"
        assert "The user did not approve running it outside the sandbox" in finished.result.text
        assert "Do not try to get around the sandbox" in finished.result.text
    assert len(user.prompts) == 2  # the answer covered one call: the next one asks again
    assert not target.exists()
    await agent.aclose()


async def test_the_retry_prompt_never_offers_always(lab: Lab) -> None:
    user = User()
    agent = await session(lab, [bash("echo x >> .git/config")], mode="yolo", user=user)
    await run(agent)
    [prompt] = user.prompts  # even yolo asks: the sandbox is the boundary
    assert {o.kind for o in prompt.options} == {"allow_once", "reject_once"}
    assert all(o.rule is None for o in prompt.options)
    await agent.aclose()


async def test_a_command_that_stays_inside_asks_nothing(lab: Lab) -> None:
    user = User()
    agent = await session(lab, [bash("echo made > made.txt && ls")], mode="auto", user=user)
    events = await run(agent)
    finished = result(events)
    assert finished.status == "completed"
    assert sandbox_of(finished) == "confined"
    assert (lab.project / "made.txt").read_text(encoding="utf-8") == "made\n"
    assert user.prompts == []
    await agent.aclose()


# ------------------------------------------------- outside the sandbox: asked later, never up front


async def test_the_permission_prompt_never_offers_running_outside_the_sandbox(lab: Lab) -> None:
    target = lab.outside / "f"
    user = User(picks=("allow_once",))
    agent = await session(lab, [bash(f"echo x > {target}")], mode="ask", user=user)
    await run(agent)
    gate = user.prompts[0]
    assert [option.label for option in gate.options][:2] == ["Allow once", "Reject"]
    assert not any(option.unsandboxed for option in gate.options)
    assert gate.command == f"echo x > {target}" and gate.ui.title == gate.command
    await agent.aclose()


async def test_allow_once_runs_inside_the_sandbox(lab: Lab) -> None:
    target = lab.outside / "f"
    user = User(picks=("allow_once",))
    agent = await session(lab, [bash(f"echo x > {target}")], mode="ask", user=user)
    events = await run(agent)
    assert len(user.prompts) == 2  # the gate's, then "the sandbox stopped it: run outside?"
    assert result(events).status == "failed"
    assert not target.exists()
    await agent.aclose()


# ---------------------------------------------------------------- controls: ordinary work


async def test_auto_mode_writes_inside_the_project(lab: Lab) -> None:
    user = User()
    agent = await session(
        lab, [bash("mkdir -p build && echo out > build/a.txt")], mode="auto", user=user
    )
    events = await run(agent)
    assert result(events).status == "completed"
    assert (lab.project / "build" / "a.txt").read_text(encoding="utf-8") == "out\n"
    assert user.prompts == []
    await agent.aclose()


async def test_an_allowed_git_status_runs(lab: Lab) -> None:
    (lab.project / "README.md").write_text("changed\n", encoding="utf-8")
    user = User()
    settings = Settings(permission_rules=rules("Bash(git status *)"))
    agent = await session(
        lab, [bash("git status --short")], mode="ask", user=user, settings=settings
    )
    events = await run(agent)
    assert user.prompts == []
    assert result(events).status == "completed"
    assert "M README.md" in result(events).result.text
    await agent.aclose()


async def test_an_allowed_npm_run_test_with_arguments_runs(lab: Lab) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    write_npm_test_script(lab.project)
    user = User()
    settings = Settings(permission_rules=rules("Bash(npm run test *)"))
    agent = await session(
        lab, [bash("npm run test -- -k x")], mode="ask", user=user, settings=settings
    )
    events = await run(agent)
    assert user.prompts == []
    assert result(events).status == "completed", result(events).result.text
    assert (lab.project / "out.txt").read_text(encoding="utf-8") == "-k x"
    await agent.aclose()


# ------------------------------------------------------------------ without a sandbox


@pytest.fixture
def no_bwrap(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with bash and git but no bwrap: the real lookup finds no sandbox."""
    bin_dir = lab.base / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "git", "env", "true"):
        for directory in os.environ["PATH"].split(os.pathsep):
            if os.path.exists(os.path.join(directory, tool)):
                (bin_dir / tool).symlink_to(os.path.join(directory, tool))
                break
    monkeypatch.setenv("PATH", str(bin_dir))


@pytest.mark.parametrize("mode", ["ask", "accept-edits", "auto", "yolo"])
@pytest.mark.usefixtures("no_bwrap")
async def test_without_a_sandbox_every_command_asks(lab: Lab, mode: Mode) -> None:
    user = User(picks=("allow_once",))
    settings = Settings(permission_rules=rules("Bash(echo *)"))
    agent = await session(
        lab,
        [bash("echo hi > hi.txt", "c1"), bash("echo again", "c2")],
        mode=mode,
        user=user,
        settings=settings,
    )
    events = await run(agent)
    notices = [n.message for n in of(Notice, events)]
    assert sum("No command sandbox is available" in n for n in notices) == 1
    assert "bubblewrap (bwrap) is not installed" in notices[0]
    assert len(user.prompts) == 2  # the allow rule and the mode did not let either run unasked
    for prompt in user.prompts:
        assert prompt.reason == "no command sandbox is available: every command asks"
        # Only this call: no rule can be granted, and there is no sandbox to run "outside" of.
        assert {o.kind for o in prompt.options} <= {"allow_once", "reject_once", "reject_always"}
        assert not any(o.unsandboxed for o in prompt.options)
    assert (lab.project / "hi.txt").read_text(encoding="utf-8") == "hi\n"
    second = await run(agent, "again")
    assert not any("No command sandbox" in n.message for n in of(Notice, second))
    await agent.aclose()


@pytest.mark.usefixtures("no_bwrap")
async def test_without_a_sandbox_deny_rules_still_deny_unasked(lab: Lab) -> None:
    user = User(picks=("allow_once",))
    settings = Settings(permission_rules=rules(deny=("Bash(rm *)",)))
    agent = await session(lab, [bash("rm -f README.md")], mode="auto", user=user, settings=settings)
    events = await run(agent)
    assert user.prompts == []
    assert result(events).status == "denied"
    assert (lab.project / "README.md").exists()
    await agent.aclose()


async def test_a_sandbox_turned_off_leaves_modes_and_rules_as_they_were(lab: Lab) -> None:
    user = User()
    settings = Settings(sandbox=SandboxConfig(enabled=False))
    write = f"{sys.executable} -c \"open('{lab.outside}/f', 'w').write('x')\""
    agent = await session(lab, [bash(write)], mode="auto", user=user, settings=settings)
    events = await run(agent)
    assert user.prompts == []
    assert not any("sandbox" in n.message for n in of(Notice, events))
    assert (lab.outside / "f").read_text(encoding="utf-8") == "x"
    await agent.aclose()


# ------------------------------------------------- redirections after `cd`: the sandbox decides


async def test_a_redirection_after_cd_runs_confined_without_asking_in_auto(lab: Lab) -> None:
    (lab.project / "src").mkdir()
    user = User()
    escape = f"cd {lab.outside} && echo x > escaped.txt"
    agent = await session(
        lab,
        [bash("cd src && echo x > y.txt", "c1"), bash(escape, "c2")],
        mode="auto",
        user=user,
    )
    events = await run(agent)
    assert (lab.project / "src" / "y.txt").read_text(encoding="utf-8") == "x\n"
    # Where bash lands after `cd` is the sandbox's to confine: the escape is stopped, and only
    # the sandbox's own "run it outside?" is asked (the user keeps it in).
    assert not (lab.outside / "escaped.txt").exists()
    [prompt] = user.prompts
    assert prompt.reason.startswith("the sandbox stopped this command")
    statuses = [finished.status for finished in of(ToolCallFinished, events)]
    assert statuses == ["completed", "failed"]
    await agent.aclose()


async def test_without_the_sandbox_a_redirection_after_cd_still_asks(lab: Lab) -> None:
    (lab.project / "src").mkdir()
    user = User()
    settings = Settings(sandbox=SandboxConfig(enabled=False))
    agent = await session(
        lab, [bash("cd src && echo x > y.txt")], mode="auto", user=user, settings=settings
    )
    await run(agent)
    [prompt] = user.prompts
    assert prompt.reason == "writes to a path computed at run time: y.txt"
    assert not (lab.project / "src" / "y.txt").exists()
    await agent.aclose()
