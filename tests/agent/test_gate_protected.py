"""Protected paths and hard links (issue 12, item 2 and item 5): a write to `.git/`, `.earshot/`,
earshot's own settings and data, or a shell start-up file asks in every mode but yolo, and no
allow rule, session grant or "always" answer covers it. Each attack runs against a real lab
(project, outside directory, fake HOME)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.backends import Mode
from agent.permissions import PermissionGate, PermissionRules, decide
from agent.protected_paths import ProtectedPaths, protected_paths
from agent.tools import PermissionRequest
from tests.agent.test_permissions_gate import FakeUser, bash, check


@dataclass
class Lab:
    project: Path
    outside: Path
    home: Path
    protected: ProtectedPaths

    def gate(self, rules: PermissionRules | None = None) -> PermissionGate:
        return PermissionGate(
            rules or PermissionRules(),
            cwd=self.project,
            roots=[self.project],
            protected=self.protected,
        )


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    project = tmp_path / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (project / ".earshot").mkdir()
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    environ = {"HOME": str(home)}
    return Lab(project, outside, home, protected_paths([project], environ=environ))


def write(path: Path, tool: str = "Write") -> PermissionRequest:
    return PermissionRequest(
        rule_tool=tool, description=f"write {path}", paths=(path,), is_file_edit=True
    )


def protected_targets(lab: Lab) -> list[Path]:
    p = lab.project
    return [
        p / ".git" / "config",
        p / ".git" / "hooks" / "pre-commit",
        p / ".git" / "info" / "attributes",
        p / ".earshot" / "settings.local.json",
        p / ".earshot" / "settings.json",
        p / ".earshot" / "skills" / "x" / "SKILL.md",
        p / "vendor" / "dep" / ".git" / "config",
        p / "sub" / ".earshot" / "settings.json",
        lab.home / ".bashrc",
        lab.home / ".zshrc",
        lab.home / ".config" / "earshot" / "settings.json",
        lab.home / ".local" / "share" / "earshot" / "sessions" / "s.jsonl",
    ]


GRANTING_RULES = ("Edit", "Write", "Edit(.earshot/**)", "Edit(//**)", "Bash", "Bash(echo *)")


@pytest.mark.parametrize("mode", ["ask", "accept-edits", "auto"])
@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_a_protected_write_asks_whatever_allow_rules_say(lab: Lab, mode: Mode, tool: str) -> None:
    rules = PermissionRules.parse(allow=GRANTING_RULES)
    for target in protected_targets(lab):
        decision = decide(
            rules,
            mode,
            write(target, tool),
            read_only=False,
            roots=[lab.project],
            protected=lab.protected,
        )
        assert (decision.outcome, decision.step, decision.grantable) == ("ask", 4, False), target
        assert decision.rule is None


@pytest.mark.parametrize(
    "command",
    [
        "echo '[core] fsmonitor = evil' >> .git/config",
        "echo x > .git/hooks/pre-commit",
        'echo \'{"permissions":{"allow":["Bash"]}}\' > .earshot/settings.local.json',
        "cat src/app.py > ./.earshot/settings.json",
        "echo x >> sub/../.git/config",
    ],
)
@pytest.mark.parametrize("mode", ["ask", "accept-edits", "auto"])
def test_a_redirection_into_a_protected_path_asks_under_allow_rules(
    lab: Lab, command: str, mode: Mode
) -> None:
    rules = PermissionRules.parse(allow=("Bash", "Bash(echo *)", "Bash(cat *)"))
    decision = decide(
        rules, mode, bash(command), read_only=False, roots=[lab.project], protected=lab.protected
    )
    assert (decision.outcome, decision.step) == ("ask", 4), command


def test_a_symlink_into_git_is_protected(lab: Lab) -> None:
    (lab.project / "hooks").symlink_to(lab.project / ".git" / "hooks")
    decision = decide(
        PermissionRules.parse(allow=("Write",)),
        "auto",
        write(lab.project / "hooks" / "post-checkout"),
        read_only=False,
        roots=[lab.project],
        protected=lab.protected,
    )
    assert (decision.outcome, decision.step) == ("ask", 4)


def test_yolo_allows_and_plan_refuses_protected_writes(lab: Lab) -> None:
    target = lab.project / ".git" / "config"
    for mode, expected in (("yolo", "allow"), ("plan", "deny")):
        decision = decide(
            PermissionRules(),
            mode,  # pyright: ignore[reportArgumentType]
            write(target),
            read_only=False,
            roots=[lab.project],
            protected=lab.protected,
        )
        assert decision.outcome == expected


def test_ordinary_project_writes_still_run_unasked(lab: Lab) -> None:
    for mode in ("accept-edits", "auto"):
        decision = decide(
            PermissionRules(),
            mode,
            write(lab.project / "src" / "app.py"),
            read_only=False,
            roots=[lab.project],
            protected=lab.protected,
        )
        assert decision.outcome == "allow"
    for name in (".gitignore", ".github/workflows/ci.yml", "src/.earshotrc"):
        decision = decide(
            PermissionRules(),
            "auto",
            write(lab.project / name),
            read_only=False,
            roots=[lab.project],
            protected=lab.protected,
        )
        assert decision.outcome == "allow", name


async def test_the_prompt_offers_no_grant_and_grants_do_not_apply(lab: Lab) -> None:
    gate = lab.gate()
    user = FakeUser(["allow_always"])
    # An ordinary edit, always allowed with a broad rule the user typed for the session.
    ordinary = await check(gate, user, write(lab.project / "src" / "app.py"))
    assert ordinary.allowed
    user = FakeUser(["allow_once", "allow_once"])
    target = lab.project / ".earshot" / "settings.local.json"
    outcome = await check(gate, user, write(target), mode="accept-edits")
    assert outcome.allowed and outcome.answer == "allow_once"
    kinds = [option.kind for option in user.prompts[0].options]
    assert "allow_always" not in kinds and "allow_session" not in kinds
    assert "protected path" in user.prompts[0].reason
    # the same call again: asked again, every time
    again = await check(gate, user, write(target), mode="accept-edits")
    assert again.allowed and len(user.prompts) == 2


async def test_a_session_wide_grant_does_not_reach_git(lab: Lab) -> None:
    gate = lab.gate(PermissionRules.parse(allow=("Bash",), source="session"))
    user = FakeUser(["reject_once"])
    outcome = await check(gate, user, bash("echo x > .git/hooks/pre-commit"), mode="auto")
    assert not outcome.allowed and len(user.prompts) == 1


# --------------------------------------------------------------------------- hard links


def test_a_write_through_a_hard_link_asks(lab: Lab) -> None:
    secret = lab.outside / "victim.txt"
    secret.write_text("outside\n", encoding="utf-8")
    inside = lab.project / "src" / "innocent.txt"
    os.link(secret, inside)
    rules = PermissionRules.parse(allow=("Edit", "Bash"))
    for request in (write(inside), write(inside, "Edit"), bash("echo pwned > src/innocent.txt")):
        decision = decide(
            rules, "auto", request, read_only=False, roots=[lab.project], protected=lab.protected
        )
        assert (decision.outcome, decision.step, decision.grantable) == ("ask", 4, False)
        assert "hard links" in decision.reason


def test_a_file_with_one_name_is_an_ordinary_write(lab: Lab) -> None:
    decision = decide(
        PermissionRules(),
        "auto",
        bash("echo ok > src/app.py"),
        read_only=False,
        roots=[lab.project],
        protected=lab.protected,
    )
    assert decision.outcome == "allow"
