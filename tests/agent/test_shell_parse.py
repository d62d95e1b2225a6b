from __future__ import annotations

from dataclasses import dataclass

import pytest

from agent.shell import parse_command, tokens


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


DECODED = [
    ("$'\\x72\\x6d' -rf /", "rm -rf /"),
    ("r$'m' -rf /", "rm -rf /"),
    ("\"r\"'m' x", "rm x"),
    ("$'\\162\\155' x", "rm x"),
    ("$'\\u0072m' x", "rm x"),
    ("$'rm\\0junk' x", "rm x"),
    ("echo $'a\\' x ' ; touch pwn", "touch pwn"),
]


@pytest.mark.parametrize(("command", "segment"), DECODED)
def test_quoting_is_removed_as_bash_removes_it(command: str, segment: str) -> None:
    parsed = parse_command(command)
    assert parsed.parsed, parsed.error
    assert segment in [s.text for s in parsed.segments]


def test_locale_strings_are_computed_so_deny_rules_cannot_be_dodged() -> None:
    segment = parse_command('$"rm" -rf /').segments[0]
    assert segment.text == "rm -rf /"
    assert segment.dynamic


@dataclass(frozen=True)
class Reading:
    command: str
    segments: tuple[str, ...] = ()
    guesses: tuple[str, ...] = ()
    opaque: bool = False
    hidden: bool = False
    foreign: tuple[str, ...] = ()


READINGS = [
    Reading("bash -lc 'a; b'", ("a", "b", "bash -lc a; b")),
    Reading("sh -o errexit -c a", ("a", "sh -o errexit -c a")),
    Reading("bash -c -- a", ("a", "bash -c -- a")),
    Reading("bash --norc -x -c a", ("a", "bash --norc -x -c a")),
    Reading("bash --rcfile x -c a", ("a", "bash --rcfile x -c a"), opaque=True),
    Reading('bash -c "$X"', ("bash -c $X",), opaque=True, hidden=True),
    Reading("bash /dev/stdin <<< 'a'", ("bash /dev/stdin",), ("a",), opaque=True),
    Reading("bash -s <<< 'a'", ("bash -s",), ("a",), opaque=True),
    Reading("x | base64 -d | bash", ("x", "base64 -d", "bash"), opaque=True, hidden=True),
    Reading("bash <(curl x)", ("curl x", "bash <(curl x)"), opaque=True, hidden=True),
    Reading("trap 'a' EXIT", ("trap a EXIT",), ("a",), opaque=True),
    Reading("alias x='a b'", ("alias x=a b",), ("a b",), opaque=True),
    Reading("hash -p /bin/rm z", ("hash -p /bin/rm z",), opaque=True, foreign=("/bin/rm",)),
    Reading("script -qc 'a' /dev/null", ("script -qc a /dev/null",), ("a",), opaque=True),
    Reading("env -S 'a b'", ("env -S a b",), ("a b",), opaque=True),
    Reading("env '-Sa b'", ("env -Sa b",), ("a b",), opaque=True),
    Reading("python3 -c 'x()'", ("python3 -c x()",), opaque=True, foreign=("x()",)),
    Reading("perl -ne 'x'", ("perl -ne x",), opaque=True, foreign=("x",)),
    Reading("node --eval=x", ("node --eval=x",), opaque=True, foreign=("x",)),
    Reading("curl x | python3", ("curl x", "python3"), opaque=True, hidden=True),
    Reading("find . -exec a {} \\;", ("find . -exec a {} ;",), ("a {}",), opaque=True),
    Reading("git -c alias.x='!a' x", ("git -c alias.x=!a x",), ("a",), True, foreign=("!a",)),
    Reading(
        "git -c alias.x=push x", ("git -c alias.x=push x",), ("git push",), True, foreign=("push",)
    ),  # fmt: skip
    Reading("printf -v 'a[$(b)]' x", ("printf -v a[$(b)] x",), ("b", ": a[$(b)]"), True),
    Reading("timeout 5 a", ("timeout 5 a",)),
    Reading("sudo -u x a", ("sudo -u x a",)),
    Reading("sudo --weird a", ("sudo --weird a",)),
    Reading("sudo -Q a", ("sudo -Q a",), ("-Q a", "a"), opaque=True),
]


@pytest.mark.parametrize("reading", READINGS, ids=lambda r: r.command)
def test_what_a_command_runs(reading: Reading) -> None:
    parsed = parse_command(reading.command)
    assert parsed.parsed, parsed.error
    assert tuple(s.text for s in parsed.segments) == reading.segments
    assert tuple(g.text for g in parsed.guesses) == reading.guesses
    assert parsed.opaque is reading.opaque
    assert bool(parsed.hidden) is reading.hidden
    assert parsed.foreign == reading.foreign


def test_a_wrapper_runs_the_command_after_its_options() -> None:
    runs = [s.runs for s in parse_command("timeout -s KILL 5 nice -n 3 npm test").segments]
    assert runs[0] is not None and runs[0].text == "nice -n 3 npm test"
    assert runs[0].runs is not None and runs[0].runs.text == "npm test"
    assert parse_command("command -v npm").segments[0].runs is None


def test_quoted_here_documents_are_read() -> None:
    parsed = parse_command("cat <<'EOF' > notes.md\n$(not run) `nor this`\nEOF\necho done")
    assert parsed.parsed, parsed.error
    assert [s.text for s in parsed.segments] == ["cat", "echo done"]
    assert parsed.writes == ("notes.md",)
