"""The rules "always allow" proposes: literal (a file named `**` must not propose
`Edit(./**)`), and for commands as broad as useful but never broader than the exact command for
an interpreter or a destructive program (issue 12 item 6, issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.permissions import PermissionGate, PermissionRules, decide, parse_rule, propose_rules
from agent.tools import PermissionRequest
from tests.agent.test_permissions_gate import FakeUser, bash, check

ROOT = Path("/work/project")


def edit(path: str, tool: str = "Edit") -> PermissionRequest:
    return PermissionRequest(
        rule_tool=tool, description="edit", paths=(Path(path),), is_file_edit=True
    )


def req(**fields: str) -> PermissionRequest:
    return PermissionRequest(description="", **fields)  # pyright: ignore[reportArgumentType]


def allowed(rules: tuple[str, ...], request: PermissionRequest) -> bool:
    decision = decide(
        PermissionRules.parse(allow=rules), "ask", request, read_only=False, roots=[ROOT]
    )
    return decision.outcome == "allow"


# ------------------------------------------------------------------------------ literal


@pytest.mark.parametrize(
    ("name", "proposed"),
    [
        ("**", r"Edit(./\*\*)"),
        ("*", r"Edit(./\*)"),
        ("a?b.py", r"Edit(./a\?b.py)"),
        ("back\\slash", r"Edit(./back\\slash)"),
        ("**/x.py", r"Edit(\*\*/x.py)"),
        ("src/*.py", r"Edit(src/\*.py)"),
        ("[abc].py", "Edit(./[abc].py)"),
        ("(paren).py", "Edit(./(paren).py)"),
    ],
)
def test_a_file_name_with_glob_characters_proposes_only_itself(name: str, proposed: str) -> None:
    request = edit(f"/work/project/{name}")
    assert propose_rules(request, cwd=ROOT) == (proposed,)
    parse_rule(proposed)
    assert allowed((proposed,), request)
    for other in ("/work/project/other.py", "/work/project/src/deep/x.py", "/work/project/ab"):
        assert not allowed((proposed,), edit(other)), other


def test_an_absolute_path_with_globs_is_literal_too() -> None:
    request = edit("/tmp/*/x", tool="Write")
    assert propose_rules(request, cwd=ROOT) == (r"Write(//tmp/\*/x)",)
    assert not allowed((r"Write(//tmp/\*/x)",), edit("/tmp/a/x", tool="Write"))


def test_a_name_the_rule_syntax_cannot_hold_gets_no_proposal() -> None:
    assert propose_rules(edit("/work/project/trailing "), cwd=ROOT) == ()
    assert propose_rules(edit("/work/project/ leading/x"), cwd=ROOT) == ()


@pytest.mark.parametrize(
    ("request_", "proposed"),
    [
        (req(rule_tool="Skill", specifier="*"), ("Skill([*])",)),
        (req(rule_tool="Task", specifier="a?"), ("Task(a[?])",)),
        (req(rule_tool="Fetch", domain="*.evil.com"), ()),
        (req(rule_tool="Fetch", domain="X.o."), ("Fetch(domain:x.o)",)),
        (req(rule_tool="mcp__a__b", mcp_server="a"), ("mcp__a__b",)),
        (req(rule_tool="mcp__a b__t", mcp_server="a b"), ()),
        (req(rule_tool="mcp__a*__t", mcp_server="a*"), ()),
    ],
)  # fmt: skip
def test_other_names_are_literal(request_: PermissionRequest, proposed: tuple[str, ...]) -> None:
    assert propose_rules(request_, cwd=ROOT) == proposed


def test_a_skill_named_star_does_not_allow_every_skill() -> None:
    star = req(rule_tool="Skill", specifier="*")
    deploy = req(rule_tool="Skill", specifier="deploy")
    [rule] = propose_rules(star, cwd=ROOT)
    assert allowed((rule,), star) and not allowed((rule,), deploy)


# ----------------------------------------------------------------------------- commands


@pytest.mark.parametrize(
    ("command", "proposed"),
    [
        # programs without subcommands: the program
        ("echo one", "Bash(echo *)"),
        ("ls -la", "Bash(ls *)"),
        ("pytest -q tests", "Bash(pytest *)"),
        ("./scripts/test --fast", "Bash(./scripts/test *)"),
        ("FOO=1 mytool x", "Bash(FOO=1 mytool *)"),
        # programs with subcommands: program and subcommand (and a runner's target)
        ("git status --short", "Bash(git status *)"),
        ("npm test", "Bash(npm test *)"),
        ("npm run test -- -k foo", "Bash(npm run test *)"),
        ("cargo build --release", "Bash(cargo build *)"),
        ("uv run pytest -q", "Bash(uv run pytest *)"),
        ("uv pip install x", "Bash(uv pip *)"),
        ("docker compose up -d", "Bash(docker compose *)"),
        ("kubectl get pods", "Bash(kubectl get *)"),
        ("go test ./...", "Bash(go test *)"),
        ("yarn lint", "Bash(yarn lint *)"),
        ("pnpm exec tsc", "Bash(pnpm exec tsc *)"),
        ("pip install -e .", "Bash(pip install *)"),
        ("make test", "Bash(make test *)"),
        # a subcommand program whose subcommand cannot be read: the exact command
        ("git -C sub status", "Bash(git -C sub status)"),
        ("git", "Bash(git)"),
        ("npm run", "Bash(npm run)"),
        # interpreters, shells, wrappers, destructive programs: the exact command only
        ("python script.py", "Bash(python script.py)"),
        ("python3.12 -m pytest", "Bash(python3.12 -m pytest)"),
        ("/usr/bin/python3 x.py", "Bash(/usr/bin/python3 x.py)"),
        ("node build.js", "Bash(node build.js)"),
        ("bash ./run.sh", "Bash(bash ./run.sh)"),
        ("sh deploy.sh", "Bash(sh deploy.sh)"),
        ("rm -rf build", "Bash(rm -rf build)"),
        ("sudo apt install x", "Bash(sudo apt install x)"),
        ("dd if=a of=b", "Bash(dd if=a of=b)"),
        ("env A=1 make", "Bash(env A=1 make)"),
        # a wrapper that only passes the command on: the rule for the command it runs
        ("timeout 30 npm test", "Bash(npm test *)"),
        ("nice -n 5 make test", "Bash(make test *)"),
        ("command ls -la", "Bash(ls *)"),
        ("find . -name x", "Bash(find . -name x)"),
        ("sed -i s/a/b/ f", "Bash(sed -i s/a/b/ f)"),
        ("curl https://example.com", "Bash(curl https://example.com)"),
    ],
)
def test_command_proposals(command: str, proposed: str) -> None:
    assert propose_rules(bash(command), cwd=ROOT) == (proposed,)
    parse_rule(proposed)
    assert allowed((proposed,), bash(command))


@pytest.mark.parametrize(
    "command",
    [
        "rm *.tmp",
        "rm 'a  b'",
        "$TOOL x",
        "python '*'",
        "sudo $(which rm) x",
        # code a rule cannot read: no rule can admit it, so none is proposed
        "python -c 'print(1)'",
        "xargs echo",
    ],
)
def test_no_proposal_when_not_even_the_exact_command_is_a_rule(command: str) -> None:
    assert propose_rules(bash(command), cwd=ROOT) == ()


@pytest.mark.parametrize(
    ("approved", "later", "runs"),
    [
        ("echo one", "echo two", True),
        ("git status", "git status --short", True),
        ("git status", "git push", False),
        ("npm run test", "npm run test -- -k x", True),
        ("npm run test", "npm run build", False),
        ("python a.py", "python b.py", False),
        ("python a.py", "python a.py; rm -rf ~", False),
        ("rm -rf build", "rm -rf /", False),
        ("bash x.sh", "bash -c 'rm -rf ~'", False),
    ],
)
async def test_always_allow_admits_what_it_said_and_nothing_else(
    approved: str, later: str, runs: bool
) -> None:
    persisted: list[tuple[str, str]] = []
    gate = PermissionGate(
        PermissionRules(),
        cwd=ROOT,
        roots=[ROOT],
        persist_rule=lambda name, rule: persisted.append((name, rule)),
    )
    user = FakeUser(["allow_always"])
    assert (await check(gate, user, bash(approved))).allowed
    [always] = [o for o in user.prompts[0].options if o.kind == "allow_always"]
    [(_, rule)] = persisted
    assert always.rule == rule and rule in always.label  # the option names the exact rule
    then = FakeUser(["reject_once"])
    assert (await check(gate, then, bash(later))).allowed is runs
    assert len(then.prompts) == (0 if runs else 1)
