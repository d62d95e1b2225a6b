from __future__ import annotations

from dataclasses import dataclass

import pytest

from agent.shell_parse import parse_command, tokens


@dataclass(frozen=True)
class Case:
    command: str
    segments: tuple[str, ...]
    writes: tuple[str, ...] = ()
    opaque: bool = False


CASES = [
    Case("npm run build", ("npm run build",)),
    Case("a && b || c ; d", ("a", "b", "c", "d")),
    Case("a | b & c", ("a", "b", "c")),
    Case("a\nb\n\nc", ("a", "b", "c")),
    Case("(a; b) || { c; d; }", ("a", "b", "c", "d")),
    Case("echo $(rm -rf ~)", ("rm -rf ~", "echo $(rm -rf ~)"), writes=("~",)),
    Case("echo `id`", ("id", "echo `id`")),
    Case('echo "$(whoami)"', ("whoami", "echo $(whoami)")),
    Case("diff <(ls a) >(tee b)", ("ls a", "tee b", "diff <(ls a) >(tee b)"), writes=("b",)),
    Case("x=$(curl evil) make", ("curl evil", "x=$(curl evil) make")),
    Case('eval "a && b"', ("a", "b", "eval a && b"), opaque=True),
    Case("sh -c 'a; b'", ("a", "b", "sh -c a; b")),
    Case("bash -ec 'a | b'", ("a", "b", "bash -ec a | b")),
    Case("bash -c \"eval 'rm x'\"", ("rm x", "eval rm x", "bash -c eval 'rm x'"), ("x",), True),
    Case('eval "$CMD"', ("eval $CMD",), opaque=True),
    Case("for f in $(ls); do rm $f; done", ("ls", "rm $f")),
    Case("if test -f x; then cat x; else touch x; fi", ("test -f x", "cat x", "touch x"), ("x",)),
    Case("while read l; do echo $l; done < in", ("read l", "echo $l")),
    Case("f() { rm -rf /; }; f", ("rm -rf /", "f"), writes=("/",)),
    Case("r''m -rf \\/", ("rm -rf /",), writes=("/",)),
    Case("FOO=1 npm test", ("FOO=1 npm test",)),
    Case("npm run build > out.txt 2>&1", ("npm run build",), writes=("out.txt",)),
    Case("ls >> log 2> err >/dev/null", ("ls",), writes=("log", "err")),
    Case("{ ls; } > f", ("ls",), writes=("f",)),
    Case("curl x | bash", ("curl x", "bash"), opaque=True),
    Case("cat <<EOF | sh\nrm -rf /\nEOF", ("cat", "sh"), opaque=True),
    Case("bash <<EOF\nrm -rf /\nEOF", ("bash",), writes=("/",), opaque=True),
    Case("source ./env.sh", ("source ./env.sh",), opaque=True),
    Case("echo hi # && rm x", ("echo hi",)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.command)
def test_segments(case: Case) -> None:
    parsed = parse_command(case.command)
    assert parsed.parsed, parsed.error
    assert tuple(segment.text for segment in parsed.segments) == case.segments
    assert parsed.writes == case.writes
    assert parsed.opaque is case.opaque


UNPARSABLE = [
    'echo "unterminated',
    "ls &&",
    "ls ${x:-$(rm y)}",
    "echo $((1 + 2))",
    "[[ -f x ]] && rm x",
    "case x in a) rm x;; esac",
    "cat <<EOF\n$(rm -rf ~)\nEOF",
    "sh -c 'echo \"unterminated'",
    "eval " + "'eval " * 12 + "x",
]


@pytest.mark.parametrize("command", UNPARSABLE)
def test_unreadable_commands_are_reported_not_guessed(command: str) -> None:
    parsed = parse_command(command)
    assert not parsed.parsed
    assert parsed.segments == ()
    assert parsed.error


def test_dynamic_program_names() -> None:
    assert parse_command("$CMD -rf /").segments[0].dynamic
    assert parse_command('"$(which rm)" x').segments[-1].dynamic
    assert parse_command("{r,m} x").segments[0].dynamic
    assert parse_command("/bin/r? x").segments[0].dynamic
    assert not parse_command("rm $FILE").segments[0].dynamic
    assert not parse_command("X=$Y rm a").segments[0].dynamic


def test_tokens_strip_quotes_and_split_on_operators() -> None:
    assert tokens("echo \"unterminated; r'm' -rf /") == ("echo", "unterminated", "rm", "-rf", "/")
    assert tokens("a&&b|c$(d)`e`") == ("a", "b", "c", "d", "e")
