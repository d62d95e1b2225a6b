"""Reads (issue 12, item 5): credential files and earshot's own settings are denied unless an
explicit rule names them; reads outside the roots ask in plan, ask and accept-edits. Attacks run
against a lab with a fake HOME."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.backends import Mode, ToolUi
from agent.permissions import Decision, PermissionGate, PermissionRules, decide, lexical_path
from agent.protected_paths import protected_paths
from agent.tools import PermissionRequest, ScopeContract, ToolServices
from agent.tools.grep import grep_tool
from agent.tools.ls import ls_tool
from tests.agent.test_permissions_gate import FakeUser
from tests.agent.tools_harness import harness, text_of


@dataclass
class Lab:
    project: Path
    home: Path
    other: Path

    def decide(
        self, request: PermissionRequest, mode: Mode = "ask", allow: tuple[str, ...] = ()
    ) -> Decision:
        return decide(
            PermissionRules.parse(allow=allow),
            mode,
            request,
            read_only=True,
            roots=[self.project],
            protected=protected_paths([self.project]),
        )


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Lab:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    files = {
        ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----",
        ".ssh/config": "Host x",
        ".aws/credentials": "aws_secret_access_key = AKIA",
        ".netrc": "machine x password hunter2",
        ".config/gh/hosts.yml": "oauth_token: gho_x",
        ".docker/config.json": '{"auths": {}}',
        ".kube/config": "token: x",
        ".gnupg/private-keys-v1.d/k.key": "key",
        ".config/earshot/settings.json": '{"providers": {"x": {"apiKey": "sk-secret"}}}',
        "notes.txt": "not a secret",
    }
    for name, text in files.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text("PROJECT=1", encoding="utf-8")
    other = tmp_path / "other"
    other.mkdir()
    (other / ".env").write_text("OTHER_SECRET=1", encoding="utf-8")
    (other / ".env.production").write_text("PROD=1", encoding="utf-8")
    (other / "readme.md").write_text("hello", encoding="utf-8")
    return Lab(project.resolve(), home, other)


def read(path: Path) -> PermissionRequest:
    return PermissionRequest(rule_tool="Read", description="read", paths=(path,))


SECRETS = [
    ".ssh/id_rsa",
    ".ssh",
    ".aws/credentials",
    ".netrc",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".kube/config",
    ".gnupg/private-keys-v1.d/k.key",
    ".config/earshot/settings.json",
]


@pytest.mark.parametrize("mode", ["plan", "ask", "accept-edits", "auto", "yolo"])
def test_secrets_are_denied_in_every_mode(lab: Lab, mode: Mode) -> None:
    for name in SECRETS:
        decision = lab.decide(read(lab.home / name), mode, allow=("Read",))
        assert (decision.outcome, decision.step) == ("deny", 1), name
        assert "explicit rule" in decision.reason
    for name in (".env", ".env.production"):
        assert lab.decide(read(lab.other / name), mode).outcome == "deny", name


def test_a_symlink_to_a_secret_is_a_secret(lab: Lab) -> None:
    (lab.project / "key").symlink_to(lab.home / ".ssh" / "id_rsa")
    (lab.project / "settings").symlink_to(lab.home / ".config" / "earshot")
    assert lab.decide(read(lab.project / "key"), "yolo").outcome == "deny"
    assert lab.decide(read(lab.project / "settings" / "settings.json"), "yolo").outcome == "deny"


def test_the_projects_own_env_file_is_the_projects(lab: Lab) -> None:
    assert lab.decide(read(lab.project / ".env")).outcome == "allow"


def test_only_a_rule_naming_the_place_lets_a_secret_be_read(lab: Lab) -> None:
    key, config = lab.home / ".ssh" / "id_rsa", lab.home / ".ssh" / "config"
    broad = ("Read", "Read(~/**)", "Read(//**)", "Read(*)")
    assert lab.decide(read(key), "auto", allow=broad).outcome == "deny"
    assert lab.decide(read(config), "auto", allow=("Read(~/.ssh/config)",)).outcome == "allow"
    assert lab.decide(read(key), "auto", allow=("Read(~/.ssh/config)",)).outcome == "deny"
    assert lab.decide(read(key), "ask", allow=("Read(~/.ssh/**)",)).outcome == "allow"
    assert lab.decide(read(key), "ask", allow=("Read(id_rsa)",)).outcome == "allow"
    env = lab.other / ".env"
    assert lab.decide(read(env), "auto", allow=(f"Read(/{lab.other}/**)",)).outcome == "deny"
    assert lab.decide(read(env), "auto", allow=(f"Read(/{env})",)).outcome == "allow"


# --------------------------------------------------------------------- outside the roots


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("plan", "ask"),
        ("ask", "ask"),
        ("accept-edits", "ask"),
        ("auto", "allow"),
        ("yolo", "allow"),
    ],
)
def test_reads_outside_the_roots_ask_in_the_careful_modes(
    lab: Lab, mode: Mode, expected: str
) -> None:
    decision = lab.decide(read(lab.other / "readme.md"), mode)
    assert decision.outcome == expected
    assert lab.decide(read(lab.project / "x.py"), mode).outcome == "allow"


async def check_read(gate: PermissionGate, user: FakeUser, request: PermissionRequest) -> bool:
    outcome = await gate.check(
        call_id="c",
        tool_name="read",
        request=request,
        read_only=True,
        ui=ToolUi(title="read", kind="read"),
        raw_input={},
        mode="ask",
        interaction=user,
        scope=ScopeContract(),
    )
    return outcome.allowed


async def test_a_read_outside_can_be_allowed_always(lab: Lab) -> None:
    persisted: list[tuple[str, str]] = []
    gate = PermissionGate(
        PermissionRules(),
        cwd=lab.project,
        roots=[lab.project],
        persist_rule=lambda name, rule: persisted.append((name, rule)),
    )
    user = FakeUser(["allow_always"])
    target = lab.other / "readme.md"
    assert await check_read(gate, user, read(target))
    assert persisted == [("allow", f"Read(/{lexical_path(target, Path('/'))})")]
    assert "outside the workspace" in user.prompts[0].reason
    later = FakeUser([])
    assert await check_read(gate, later, read(target))
    refused = FakeUser(["reject_once"])
    assert not await check_read(gate, refused, read(lab.other / "other.md"))
    assert len(refused.prompts) == 1


# -------------------------------------------------------------------------- search tools


async def test_search_tools_do_not_reveal_secrets(lab: Lab) -> None:
    h = harness(lab.project)
    gate = PermissionGate(PermissionRules(), cwd=lab.project, roots=[lab.project])
    h.ctx.services = ToolServices(
        read_denied=gate.read_denied, read_deny_globs=gate.read_deny_globs
    )
    pattern = "secret|PRIVATE|password|oauth"
    found = text_of(await h.run(grep_tool, pattern=pattern, path=str(lab.home)))
    for leaked in ("sk-secret", "PRIVATE KEY", "hunter2", "gho_x", "aws_secret"):
        assert leaked not in found
    listing = text_of(await h.run(ls_tool, path=str(lab.home / ".ssh")))
    assert "id_rsa" not in listing
