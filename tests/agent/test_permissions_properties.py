"""Property tests: compound commands and path spellings cannot get past the rules."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.backends import MODES, Mode
from agent.permissions import PermissionRules, decide
from agent.shell import parse_command
from agent.tools import PermissionRequest

ALLOWED = ("npm run build", "npm run test -- -k x", "npm run lint --fix", "npm run")
REFUSED = ("rm -rf ~", "curl evil.example", "npmrun x", "npm install", "git push -f", "rm x")
ROOT = Path("/work/project")


@dataclass(frozen=True)
class Command:
    text: str
    leaves: tuple[str, ...]


def _leaf(text: str) -> Command:
    return Command(text, (text,))


def _combine(children: st.SearchStrategy[Command]) -> st.SearchStrategy[Command]:
    def join(pair: tuple[Command, Command], op: str) -> Command:
        a, b = pair
        return Command(
            f"{a.text} {op} {b.text}" if op != "\n" else f"{a.text}\n{b.text}", a.leaves + b.leaves
        )

    joined = st.builds(
        join, st.tuples(children, children), st.sampled_from(["&&", "||", ";", "|", "&", "\n"])
    )
    wrapped = st.tuples(children, st.sampled_from(range(7))).map(lambda t: _wrap(*t))
    return st.one_of(joined, wrapped)


def _wrap(inner: Command, how: int) -> Command:
    text = inner.text
    match how:
        case 0:
            return Command(f"( {text} )", inner.leaves)
        case 1:
            return Command(f"{{ {text}\n}}", inner.leaves)
        case 2:
            return Command(f"npm run $( {text} )", ("npm run $(...)", *inner.leaves))
        case 3 if "`" not in text and "$(" not in text:
            return Command(f"npm run `{text}`", ("npm run `...`", *inner.leaves))
        case 4 if "'" not in text:
            return Command(f"eval '{text}'", inner.leaves)
        case 5 if "'" not in text:
            return Command(f"bash -c '{text}'", inner.leaves)
        case 6:
            return Command(f"npm run x <( {text} )", ("npm run x <(...)", *inner.leaves))
        case _:
            return Command(f"( {text} )", inner.leaves)


commands = st.recursive(st.sampled_from(ALLOWED + REFUSED).map(_leaf), _combine, max_leaves=8)


def _allowed_leaf(leaf: str) -> bool:
    return leaf in ALLOWED or leaf.startswith("npm run ")


def _bash(command: str) -> PermissionRequest:
    return PermissionRequest(rule_tool="Bash", description=command, command=command)


@settings(max_examples=300, deadline=None)
@given(commands)
def test_no_allow_rule_admits_a_compound_command_unless_every_segment_matches(
    command: Command,
) -> None:
    rules = PermissionRules.parse(allow=("Bash(npm run *)",))
    decision = decide(rules, "ask", _bash(command.text), read_only=False, roots=[ROOT])
    every_leaf_allowed = all(_allowed_leaf(leaf) for leaf in command.leaves)
    if decision.outcome == "allow":
        assert every_leaf_allowed, (command.text, decision)
    elif every_leaf_allowed:
        # only a command the parser could not read, or one that runs code a rule cannot see
        # (`eval`), may be refused a rule it deserves
        parsed = parse_command(command.text)
        assert not parsed.parsed or parsed.opaque, (command.text, decision)


@settings(max_examples=300, deadline=None)
@given(
    commands,
    st.sampled_from(MODES),
    st.sampled_from([(), ("Bash",), ("Bash(rm *)",), ("Bash(npm run *)",)]),
)
def test_a_deny_rule_always_wins(command: Command, mode: Mode, allow: tuple[str, ...]) -> None:
    rules = PermissionRules.parse(allow=allow, deny=("Bash(rm *)",))
    decision = decide(rules, mode, _bash(command.text), read_only=False, roots=[ROOT])
    if any(leaf.startswith("rm ") for leaf in command.leaves):
        assert (decision.outcome, decision.step) == ("deny", 1), command.text


# ------------------------------------------------------------------------------------ paths


@dataclass(frozen=True)
class Layout:
    root: Path
    outside: Path


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Layout]:
    base = tmp_path_factory.mktemp("spell")
    root = base / "home" / "project"
    for directory in ("src/inner", "secret", "lib"):
        (root / directory).mkdir(parents=True)
    (base / "outside").mkdir()
    (root / "src" / "link").symlink_to("../secret")
    (root / "src" / "away").symlink_to(base / "outside")
    (root / ".env").write_text("KEY=1\n", encoding="utf-8")
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = str(base / "home")
    try:
        yield Layout(Path(os.path.realpath(root)), Path(os.path.realpath(base / "outside")))
    finally:
        if old_home is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = old_home


# (components from the project root, where the file really is)
TARGETS: list[tuple[tuple[str, ...], str]] = [
    (("src", "a.py"), "src"),
    (("src", "inner", "b.py"), "src"),
    (("secret", "k"), "secret"),
    (("src", "link", "k"), "secret"),
    (("lib", "c.py"), "lib"),
    ((".env",), "env"),
    (("src", "away", "x"), "outside"),
    (("..", "..", "outside", "y"), "outside"),
]

NOISE = ["", ".", "inner/..", "./.", ""]


@st.composite
def spellings(draw: st.DrawFn) -> tuple[str, str]:
    parts, where = draw(st.sampled_from(TARGETS))
    spelled: list[str] = []
    for index, part in enumerate(parts):
        noise = draw(st.sampled_from(NOISE))
        if noise == "inner/.." and (index == 0 or parts[index - 1] != "src"):
            noise = "."
        if noise:
            spelled.append(noise)
        spelled.append(part)
    separator = draw(st.sampled_from(["/", "//"]))
    body = separator.join(spelled)
    trailing = draw(st.sampled_from(["", "/"])) if where != "env" else ""
    prefix = draw(st.sampled_from(["", "./", "ROOT/", "ROOT//", "~/project/", "//ROOT/"]))
    return prefix + body + trailing, where


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spellings())
def test_no_path_spelling_escapes_the_roots_or_an_edit_rule(
    layout: Layout, spelled: tuple[str, str]
) -> None:
    text, where = spelled
    text = text.replace("//ROOT/", "/" + str(layout.root) + "/").replace("ROOT", str(layout.root))
    request = PermissionRequest(
        rule_tool="Edit", description="edit", paths=(Path(text),), is_file_edit=True
    )
    rules = PermissionRules.parse(allow=("Edit(src/**)",), deny=("Edit(secret/**)", "Edit(./.env)"))

    def run(mode: Mode, r: PermissionRules = rules) -> tuple[str, int]:
        d = decide(r, mode, request, read_only=False, roots=[layout.root], cwd=layout.root)
        return d.outcome, d.step

    match where:
        case "src":
            assert run("ask") == ("allow", 7), text
        case "secret" | "env":
            assert run("yolo") == ("deny", 1), text
        case "lib":
            assert run("ask") == ("ask", 8), text
        case "outside":
            assert run("auto", PermissionRules.parse(allow=("Edit",))) == ("ask", 4), text
            assert run("ask") == ("ask", 4), text
        case _:
            raise AssertionError(where)


@pytest.mark.parametrize(
    "spelling",
    [
        ".env",
        "./.env",
        ".//.env",
        "src/../.env",
        "src/inner/../../.env",
        "~/project/.env",
        "ROOT/.env",
        "//ROOT/.env",
    ],
)
def test_read_deny_matches_however_the_path_is_spelled(layout: Layout, spelling: str) -> None:
    text = spelling.replace("//ROOT/", "/" + str(layout.root) + "/").replace(
        "ROOT", str(layout.root)
    )
    request = PermissionRequest(rule_tool="Read", description="read", paths=(Path(text),))
    rules = PermissionRules.parse(deny=("Read(./.env)",))
    decision = decide(rules, "yolo", request, read_only=True, roots=[layout.root], cwd=layout.root)
    assert (decision.outcome, decision.step) == ("deny", 1), text


def test_a_symlink_to_a_denied_file_is_denied(layout: Layout) -> None:
    link = layout.root / "lib" / "innocent"
    link.symlink_to(layout.root / ".env")
    try:
        request = PermissionRequest(rule_tool="Read", description="read", paths=(link,))
        rules = PermissionRules.parse(deny=("Read(./.env)",))
        decision = decide(
            rules, "yolo", request, read_only=True, roots=[layout.root], cwd=layout.root
        )
        assert decision.outcome == "deny"
    finally:
        link.unlink()
