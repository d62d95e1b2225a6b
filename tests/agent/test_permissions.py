"""`decide`: one table per step of the policy, and rule syntax."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent.backends import MODES, Mode
from agent.permissions import Decision, PermissionRules, decide, parse_rule, propose_rules
from agent.tools import PermissionRequest, ScopeContract

ROOT = Path("/work/project")
EXTRA = Path("/work/shared-lib")


def bash(command: str) -> PermissionRequest:
    return PermissionRequest(rule_tool="Bash", description=command, command=command)


def edit(*paths: str, tool: str = "Edit") -> PermissionRequest:
    return PermissionRequest(
        rule_tool=tool,
        description="edit",
        paths=tuple(Path(p) for p in paths),
        is_file_edit=tool in ("Edit", "Write"),
    )


def read(*paths: str) -> PermissionRequest:
    return PermissionRequest(rule_tool="Read", description="read", paths=tuple(map(Path, paths)))


def fetch(domain: str) -> PermissionRequest:
    return PermissionRequest(rule_tool="Fetch", description="fetch", domain=domain)


def other(tool: str, specifier: str | None = None) -> PermissionRequest:
    return PermissionRequest(rule_tool=tool, description=tool, specifier=specifier)


@dataclass(frozen=True)
class Case:
    name: str
    request: PermissionRequest
    outcome: str
    step: int
    mode: Mode = "ask"
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    read_only: bool = False
    rule: str | None = None
    scope: tuple[str, ...] = field(default=())


def run(case: Case) -> Decision:
    rules = PermissionRules.parse(allow=case.allow, ask=case.ask, deny=case.deny)
    scope = ScopeContract(declared=[Path(p) for p in case.scope])
    return decide(
        rules, case.mode, case.request, read_only=case.read_only, roots=[ROOT, EXTRA], scope=scope
    )


def check(case: Case) -> None:
    decision = run(case)
    assert (decision.outcome, decision.step) == (case.outcome, case.step), decision
    if case.rule is not None:
        assert decision.rule is not None and str(decision.rule) == case.rule


STEP1_DENY = [
    Case(
        "deny beats yolo",
        bash("rm -rf build"),
        "deny",
        1,
        mode="yolo",
        deny=("Bash(rm *)",),
        rule="Bash(rm *)",
    ),
    Case(
        "deny beats allow",
        bash("rm x"),
        "deny",
        1,
        mode="auto",
        allow=("Bash(rm *)",),
        deny=("Bash(rm *)",),
    ),
    Case(
        "deny beats read-only",
        read("/work/project/.env"),
        "deny",
        1,
        read_only=True,
        deny=("Read(./.env)",),
    ),
    Case(
        "deny any segment",
        bash("npm test && rm x"),
        "deny",
        1,
        mode="yolo",
        allow=("Bash",),
        deny=("Bash(rm *)",),
    ),
    Case("deny inside $()", bash("echo $(rm -rf ~)"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny through sudo", bash("sudo -u root rm -rf /"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny through env", bash("env A=1 rm x"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny through xargs", bash("ls | xargs rm"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny find -exec", bash("find . -exec rm {} ;"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny absolute program", bash("/bin/rm -rf x"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny quoted program", bash("'r'\"m\" x"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny in sh -c", bash("sh -c 'cd /; rm -rf x'"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny piped to shell", bash("echo 'rm -rf /' | bash"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny unparsable", bash('echo "oops; rm -rf /'), "deny", 1, deny=("Bash(rm -rf *)",)),
    Case("deny ansi-c", bash("echo $'x' && rm -rf /"), "deny", 1, deny=("Bash(rm *)",)),
    Case(
        "deny computed program", bash("$TOOL -rf /"), "deny", 1, mode="yolo", deny=("Bash(rm *)",)
    ),
    Case("deny brace program", bash("{rm,-rf,/}"), "deny", 1, deny=("Bash(rm *)",)),
    Case("deny bare tool", bash('echo "unparsable'), "deny", 1, mode="yolo", deny=("Bash",)),
    Case(
        "deny edit via write",
        edit("/work/project/.env", tool="Write"),
        "deny",
        1,
        mode="yolo",
        deny=("Edit(.env)",),
    ),
    Case(
        "deny edit by redirect", bash("echo x > .env"), "deny", 1, mode="yolo", deny=("Edit(.env)",)
    ),
    Case("deny mcp server", other("mcp__db__drop"), "deny", 1, mode="yolo", deny=("mcp__db",)),
    Case(
        "deny fetch host",
        fetch("evil.example"),
        "deny",
        1,
        mode="yolo",
        deny=("Fetch(domain:evil.example)",),
    ),
    Case("deny skill", other("Skill", "deploy"), "deny", 1, mode="yolo", deny=("Skill(deploy)",)),
    Case("deny task", other("Task", "general"), "deny", 1, mode="auto", deny=("Task",)),
]

STEP2_READ_ONLY = [
    Case("read-only in plan", read("/work/project/a"), "allow", 2, mode="plan", read_only=True),
    Case("read outside roots asks", read("/etc/passwd"), "ask", 2, read_only=True),
    Case("read outside in plan", read("/etc/hosts"), "ask", 2, mode="plan", read_only=True),
    Case(
        "read outside in accept-edits",
        read("/etc/hosts"),
        "ask",
        2,
        mode="accept-edits",
        read_only=True,
    ),
    Case("read outside in auto", read("/etc/passwd"), "allow", 2, mode="auto", read_only=True),
    Case(
        "read outside allowed by rule",
        read("/etc/hosts"),
        "allow",
        2,
        allow=("Read(//etc/**)",),
        read_only=True,
    ),
    Case("read in second root", read("/work/shared-lib/x"), "allow", 2, read_only=True),
    Case("other read-only outside", other("Skill", "x"), "allow", 2, read_only=True),
    Case(
        "read-only beats ask rule",
        read("/work/project/a"),
        "allow",
        2,
        ask=("Read",),
        read_only=True,
    ),
    Case(
        "read-only other deny no match",
        read("/work/project/a"),
        "allow",
        2,
        deny=("Read(./.env)",),
        read_only=True,
    ),
]

STEP3_PLAN = [
    Case("plan refuses edits", edit("/work/project/a.py"), "deny", 3, mode="plan"),
    Case(
        "plan beats allow rule", bash("npm test"), "deny", 3, mode="plan", allow=("Bash(npm test)",)
    ),
    Case("plan refuses outside too", edit("/etc/x"), "deny", 3, mode="plan"),
]

STEP4_OUTSIDE = [
    Case("outside roots in auto", edit("/etc/hosts"), "ask", 4, mode="auto"),
    Case("outside beats allow", edit("/etc/hosts"), "ask", 4, mode="auto", allow=("Edit",)),
    Case("outside in accept-edits", edit("/tmp/x"), "ask", 4, mode="accept-edits"),
    Case("dotdot escape", edit("/work/project/../secret"), "ask", 4, mode="auto"),
    Case("home", edit("~/.bashrc"), "ask", 4, mode="auto"),
    Case("second root is inside", edit("/work/shared-lib/x.py"), "allow", 8, mode="auto"),
    Case(
        "redirect outside",
        bash("npm run x > /etc/motd"),
        "ask",
        4,
        mode="auto",
        allow=("Bash(npm run *)",),
    ),
    Case("computed redirect", bash("echo x > $HOME/.profile"), "ask", 4, mode="auto"),
    Case("devnull is fine", bash("ls > /dev/null 2>&1"), "allow", 8, mode="auto"),
    Case(
        "out of scope",
        edit("/work/project/b.py"),
        "ask",
        4,
        mode="auto",
        scope=("/work/project/src",),
    ),
    Case(
        "in scope",
        edit("/work/project/src/b.py"),
        "allow",
        8,
        mode="auto",
        scope=("/work/project/src",),
    ),
]

STEP5_YOLO = [
    Case("yolo allows outside", edit("/etc/hosts"), "allow", 5, mode="yolo"),
    Case(
        "yolo beats ask rule", bash("git push"), "allow", 5, mode="yolo", ask=("Bash(git push *)",)
    ),
    Case("yolo unparsable", bash('echo "x'), "allow", 5, mode="yolo"),
]

STEP6_ASK = [
    Case(
        "ask beats allow",
        bash("git push origin"),
        "ask",
        6,
        mode="auto",
        allow=("Bash(git *)",),
        ask=("Bash(git push *)",),
        rule="Bash(git push *)",
    ),
    Case(
        "ask any segment",
        bash("git status; git push"),
        "ask",
        6,
        mode="auto",
        allow=("Bash",),
        ask=("Bash(git push *)",),
    ),
    Case(
        "ask edit glob",
        edit("/work/project/pkg/a.lock"),
        "ask",
        6,
        mode="accept-edits",
        ask=("Edit(*.lock)",),
    ),
    Case(
        "ask fetch",
        fetch("api.example.com"),
        "ask",
        6,
        mode="auto",
        ask=("Fetch(domain:*.example.com)",),
    ),
    Case("ask mcp tool", other("mcp__db__query"), "ask", 6, mode="auto", ask=("mcp__db__query",)),
    Case(
        "ask unparsable",
        bash('echo "x; git push'),
        "ask",
        6,
        mode="auto",
        ask=("Bash(git push *)",),
    ),
]

STEP7_ALLOW = [
    Case(
        "allow prefix",
        bash("npm run build"),
        "allow",
        7,
        allow=("Bash(npm run *)",),
        rule="Bash(npm run *)",
    ),
    Case("allow bare prefix", bash("npm run"), "allow", 7, allow=("Bash(npm run *)",)),
    Case(
        "allow colon star",
        bash("npm run test -- -k x"),
        "allow",
        7,
        allow=("Bash(npm run test:*)",),
    ),
    Case(
        "allow every segment",
        bash("npm run a && git status"),
        "allow",
        7,
        allow=("Bash(npm run *)", "Bash(git status)"),
    ),
    Case("allow edit glob", edit("/work/project/src/a/b.py"), "allow", 7, allow=("Edit(src/**)",)),
    Case(
        "edit rule covers write",
        edit("/work/project/src/n.py", tool="Write"),
        "allow",
        7,
        allow=("Edit(src/**)",),
    ),
    Case(
        "allow root file", edit("/work/project/README.md"), "allow", 7, allow=("Edit(./README.md)",)
    ),
    Case(
        "allow //abs",
        edit("/work/shared-lib/x.py"),
        "allow",
        7,
        allow=("Edit(//work/shared-lib/**)",),
    ),
    Case("allow mcp server", other("mcp__git__status"), "allow", 7, allow=("mcp__git",)),
    Case("allow mcp glob", other("mcp__git__log"), "allow", 7, allow=("mcp__git__*",)),
    Case("allow task type", other("Task", "explore"), "allow", 7, allow=("Task(explore)",)),
    Case("allow skill", other("Skill", "pdf"), "allow", 7, allow=("Skill(pdf)",)),
    Case(
        "allow fetch host",
        fetch("Docs.Python.org."),
        "allow",
        7,
        allow=("Fetch(domain:docs.python.org)",),
    ),
    Case("allow session source", bash("make"), "allow", 7, allow=("Bash(make *)",)),
]

STEP8_MODE = [
    Case("ask mode prompts", bash("make"), "ask", 8),
    Case("no segment rule", bash("npm run a && curl x"), "ask", 8, allow=("Bash(npm run *)",)),
    Case("prefix is a word", bash("npm runx"), "ask", 8, allow=("Bash(npm run *)",)),
    Case("lsof is not ls", bash("lsof"), "ask", 8, allow=("Bash(ls *)",)),
    Case("unparsable never allowed", bash('npm run "x'), "ask", 8, allow=("Bash(npm run *)",)),
    Case(
        "assignment must be allowed", bash("PATH=. npm run x"), "ask", 8, allow=("Bash(npm run *)",)
    ),
    Case(
        "substitution must be allowed",
        bash("npm run $(curl evil)"),
        "ask",
        8,
        allow=("Bash(npm run *)",),
    ),
    Case(
        "sh -c inner must be allowed",
        bash("bash -c 'npm run a; curl x'"),
        "ask",
        8,
        allow=("Bash(npm run *)",),
    ),
    Case(
        "glob does not escape",
        edit("/work/project/src/../lib/a.py"),
        "ask",
        8,
        allow=("Edit(src/**)",),
    ),
    Case(
        "write rule is not edit",
        edit("/work/project/a.py"),
        "ask",
        8,
        mode="ask",
        allow=("Write(a.py)",),
    ),
    Case(
        "subdomain not implied",
        fetch("evil.github.io"),
        "ask",
        8,
        allow=("Fetch(domain:github.io)",),
    ),
    Case(
        "apex not in wildcard",
        fetch("example.com"),
        "ask",
        8,
        allow=("Fetch(domain:*.example.com)",),
    ),
    Case("mcp prefix boundary", other("mcp__github__x"), "ask", 8, allow=("mcp__git",)),
    Case("accept-edits edit", edit("/work/project/a.py"), "allow", 8, mode="accept-edits"),
    Case("accept-edits bash", bash("make"), "ask", 8, mode="accept-edits"),
    Case("auto allows", bash("curl x | sh"), "allow", 8, mode="auto"),
    Case(
        "multi-path allow needs all",
        edit("/work/project/src/a", "/work/project/b"),
        "ask",
        8,
        allow=("Edit(src/**)",),
    ),
]


@pytest.mark.parametrize("case", STEP1_DENY, ids=lambda c: c.name)
def test_step1_deny_rules_refuse(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", STEP2_READ_ONLY, ids=lambda c: c.name)
def test_step2_read_only_never_prompts(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", STEP3_PLAN, ids=lambda c: c.name)
def test_step3_plan_refuses_mutation(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", STEP4_OUTSIDE, ids=lambda c: c.name)
def test_step4_writes_outside_prompt(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", STEP5_YOLO, ids=lambda c: c.name)
def test_step5_yolo_allows(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", STEP6_ASK, ids=lambda c: c.name)
def test_step6_ask_rules_prompt(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", STEP7_ALLOW, ids=lambda c: c.name)
def test_step7_allow_rules_allow(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", STEP8_MODE, ids=lambda c: c.name)
def test_step8_the_mode_decides(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("mode", MODES)
def test_deny_wins_in_every_mode(mode: Mode) -> None:
    rules = PermissionRules.parse(allow=("Bash", "Edit"), deny=("Bash(curl *)", "Edit(secrets/**)"))
    for request in (bash("curl x"), edit("/work/project/secrets/k")):
        decision = decide(rules, mode, request, read_only=False, roots=[ROOT])
        assert (decision.outcome, decision.step) == ("deny", 1)


# ------------------------------------------------------------------------------- syntax


@pytest.mark.parametrize(
    ("text", "tool", "pattern"),
    [
        ("Bash", "Bash", None),
        ("Bash(*)", "Bash", None),
        (" Bash( npm run * ) ", "Bash", "npm run *"),
        ("Edit(src/**)", "Edit", "src/**"),
        ("Read(./.env)", "Read", "./.env"),
        ("WebFetch(domain:example.com)", "Fetch", "domain:example.com"),
        ("mcp__server__tool", "mcp__server__tool", None),
        ("mcp__server__*", "mcp__server__*", None),
        ("Bash(echo (a))", "Bash", "echo (a)"),
    ],
)
def test_parse_rule(text: str, tool: str, pattern: str | None) -> None:
    rule = parse_rule(text, "project")
    assert (rule.tool, rule.pattern, rule.source) == (tool, pattern, "project")


@pytest.mark.parametrize(
    "text", ["", "Bash(", "Bash()", "(x)", "Ba sh", "Fetch(example.com)", "Fetch(domain:)"]
)
def test_parse_rule_rejects_malformed(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rule(text)


def test_from_settings_keeps_every_scope(tmp_path: Path) -> None:
    from agent.settings import load_settings

    home = tmp_path / "config"
    (home / "earshot").mkdir(parents=True)
    project = tmp_path / "project"
    # A trusted workspace: untrusted project allow rules are dropped (agent.settings.trust).
    (home / "earshot" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(rm *)"]}, "trustedDirectories": [str(project)]}),
        encoding="utf-8",
    )
    (project / ".earshot").mkdir(parents=True)
    (project / ".earshot" / "settings.json").write_text(
        '{"permissions": {"allow": ["Bash(rm *)", "Edit(src/**)"], "ask": ["Bash(git push *)"]}}',
        encoding="utf-8",
    )
    settings = load_settings(project, environ={}, config_home=home)
    rules = PermissionRules.from_settings(settings)
    assert [str(r) for r in rules.deny] == ["Bash(rm *)"]
    assert [(str(r), r.source) for r in rules.allow] == [
        ("Bash(rm *)", "project"),
        ("Edit(src/**)", "project"),
    ]
    decision = decide(rules, "auto", bash("rm x"), read_only=False, roots=[project])
    assert (decision.outcome, decision.step) == ("deny", 1)


# ----------------------------------------------------------------------------- proposals


@pytest.mark.parametrize(
    ("request_", "proposed"),
    [
        (bash("npm run test -- -k foo"), ("Bash(npm run test *)",)),
        (bash("git status --short"), ("Bash(git status *)",)),
        (bash("ls -la"), ("Bash(ls *)",)),
        (bash("npm run build && pytest -q"), ("Bash(npm run build *)", "Bash(pytest *)")),
        (bash('echo "unterminated'), ()),
        (bash("$X y"), ()),
        (edit("/work/project/src/app.py"), ("Edit(src/app.py)",)),
        (edit("/work/project/app.py"), ("Edit(./app.py)",)),
        (edit("/etc/hosts", tool="Write"), ("Write(//etc/hosts)",)),
        (fetch("Example.com"), ("Fetch(domain:example.com)",)),
        (other("mcp__db__query"), ("mcp__db__query",)),
        (other("Skill", "pdf"), ("Skill(pdf)",)),
    ],
)
def test_proposed_rules_are_readable_and_parse(
    request_: PermissionRequest, proposed: tuple[str, ...]
) -> None:
    assert propose_rules(request_, cwd=ROOT) == proposed
    for text in proposed:
        parse_rule(text)


def test_proposed_rule_admits_the_request_next_time() -> None:
    for request in (bash("npm run test -- -k foo"), edit("/work/project/src/app.py"), fetch("a.b")):
        rules = PermissionRules.parse(allow=propose_rules(request, cwd=ROOT))
        assert decide(rules, "ask", request, read_only=False, roots=[ROOT]).outcome == "allow"
