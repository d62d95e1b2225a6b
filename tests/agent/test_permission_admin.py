"""`/permissions` (agent.permissions.admin): which files it edits, and what it never touches."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from agent.permissions import PermissionGate, PermissionRules
from agent.permissions.admin import PermissionAdmin
from agent.permissions.gate import RuleBook
from agent.permissions.rules import parse_rule, parse_rule_list
from agent.settings import Settings, load_settings
from tests.agent.test_trust import Workspace


def admin(ws: Workspace) -> tuple[PermissionAdmin, PermissionGate]:
    settings = ws.load()
    book = RuleBook(PermissionRules.from_settings(settings))
    gate = PermissionGate(book, cwd=ws.cwd, roots=[ws.cwd])

    def reload() -> Settings:
        return load_settings(ws.cwd, environ={}, config_home=ws.config_home)

    return PermissionAdmin(cwd=ws.cwd, settings=settings, gate=gate, book=book, reload=reload), gate


def user_file(ws: Workspace, data: object, mode: int) -> Path:
    path = ws.config_home / "earshot" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    path.chmod(mode)
    return path


def test_revoking_a_user_rule_keeps_the_rest_of_the_file_and_its_private_mode(
    tmp_path: Path,
) -> None:
    ws = Workspace(tmp_path)
    data = {
        "providers": {"mine": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1",
                               "apiKey": "sk-private"}},
        "permissions": {"allow": ["Bash(make *)", "Read"], "deny": ["Bash(make *)"]},
    }  # fmt: skip
    path = user_file(ws, data, 0o600)
    permissions, gate = admin(ws)
    assert len(gate.rules.allow) == 2
    report = permissions.run("revoke  Bash(make *)")
    assert "Revoked `Bash(make *)`" in report.text
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["permissions"] == {"allow": ["Read"], "deny": []}
    assert saved["providers"]["mine"]["apiKey"] == "sk-private"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [str(rule) for rule in gate.rules.allow] == ["Read"]
    assert gate.rules.deny == ()
    assert "sk-private" not in report.text + json.dumps(report.data)


def test_revoke_never_edits_a_file_in_the_project_directory(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.trust()
    local = ws.write("settings.local.json", {"permissions": {"allow": ["Bash"]}})
    project = ws.write("settings.json", {"permissions": {"deny": ["Read(secret)"]}})
    before = (local.read_text(encoding="utf-8"), project.read_text(encoding="utf-8"))
    permissions, gate = admin(ws)
    for rule in ("Bash", "Read(secret)"):
        report = permissions.run(f"revoke {rule}")
        assert "earshot does not edit it" in report.text
    assert (local.read_text(encoding="utf-8"), project.read_text(encoding="utf-8")) == before
    assert [str(rule) for rule in gate.rules.allow] == ["Bash"]


def test_a_session_grant_is_listed_and_revoked_from_memory_only(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    permissions, gate = admin(ws)
    # What an "allow for this session" answer adds.
    gate._granted.append(parse_rule("Bash(ls *)", "session"))  # pyright: ignore[reportPrivateUsage]
    listed = json.loads(json.dumps(permissions.run("").data))
    [session] = [s for s in listed["scopes"] if s["scope"] == "session"]
    assert session["rules"] == [
        {"list": "allow", "rule": "Bash(ls *)", "applied": True, "revocable": True}
    ]
    assert (
        "Revoked `Bash(ls *)` from this session's answers"
        in permissions.run("revoke Bash(ls *)").text
    )
    assert gate.answered_rules() == ()
    assert not (ws.config_home / "earshot").exists()


def test_added_rules_go_to_the_remembered_file_and_apply_untrusted(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    permissions, gate = admin(ws)
    assert "Not a permission rule" in permissions.run("deny Fetch(example.com)").text
    report = permissions.run("deny Fetch(domain:example.com)")
    assert "Added `Fetch(domain:example.com)` to deny" in report.text
    remembered = ws.load().remembered
    assert remembered is not None and remembered.is_file()
    assert [str(rule) for rule in gate.rules.deny] == ["Fetch(domain:example.com)"]
    assert not (ws.cwd / ".earshot").exists()


@pytest.mark.parametrize(
    ("shown", "rules"),
    [
        ("Bash(ls && echo marker)", ["Bash(ls && echo marker)"]),
        ("Bash(ls *), Bash(echo *)", ["Bash(ls *)", "Bash(echo *)"]),
        (
            "Always reject `Bash(ls *), Bash(echo *)` in this project",
            ["Bash(ls *)", "Bash(echo *)"],
        ),
        ("`Read(./a)`, `mcp__github`", ["Read(./a)", "mcp__github"]),
        ("Bash(echo a, b)", ["Bash(echo a, b)"]),
        ("``Bash(echo `date`)``", ["Bash(echo `date`)"]),
    ],
)
def test_a_rule_list_is_read_as_prompts_and_listings_show_it(shown: str, rules: list[str]) -> None:
    assert [str(rule) for rule in parse_rule_list(shown)] == rules
