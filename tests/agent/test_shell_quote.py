"""`agent.shell.quote` against the real bash: the value of `$'...'` strings and quote removal."""

from __future__ import annotations

import random
import subprocess

import pytest

from agent.shell.quote import Unclear, decode_ansi_c, desugar, unquote

_ANSI_TOKENS = [
    "a", "m", "7", "f", " ", "x", "\\x", "\\x7", "\\x72", "\\x6D", "\\x414", "\\xg", "\\u",
    "\\u0072", "\\u00e9", "\\U", "\\U00000072", "\\U0001F600", "\\101", "\\1", "\\0", "\\08",
    "\\1234", "\\c", "\\ca", "\\cZ", "\\c@", "\\a", "\\b", "\\e", "\\E", "\\f", "\\n", "\\r",
    "\\t", "\\v", "\\\\", "\\'", '\\"', "\\?", "\\q", "\\z", '"', "$", "`",
]  # fmt: skip
_WORD_TOKENS = [
    "a", "b", "'a b'", "'\"'", "''", '"a b"', '"\'"', '""', '"\\$x"', '"\\\\"', '"\\a"',
    '"\\`"', "\\x", "\\ ", "\\'", '\\"', "\\\\", "$'a\\tb'", "$'\\x72m'", "$'\\''", "r", "m",
]  # fmt: skip
_SEPARATOR = "\x1e"


def _bash_values(words: list[str]) -> list[str]:
    """What bash makes of each word, in one bash process."""
    script = "".join(f"printf '%s\\036' {word}\n" for word in words)
    result = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        check=True,
        env={"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"},
    )
    return result.stdout.decode("utf-8", errors="surrogateescape").split(_SEPARATOR)[:-1]


def _random_joins(tokens: list[str], count: int, seed: int) -> list[str]:
    chosen = random.Random(seed)
    return ["".join(chosen.choices(tokens, k=chosen.randint(1, 6))) for _ in range(count)]


def test_ansi_c_strings_decode_as_bash_decodes_them() -> None:
    bodies = sorted(set(_ANSI_TOKENS) | set(_random_joins(_ANSI_TOKENS, 400, seed=12)))
    bodies = [body for body in bodies if not body.endswith("\\") and "\\c'" not in body]
    expected = _bash_values([f"$'{body}'" for body in bodies])
    assert [decode_ansi_c(body) for body in bodies] == expected


def test_quote_removal_matches_bash() -> None:
    words = sorted(set(_WORD_TOKENS) | set(_random_joins(_WORD_TOKENS, 400, seed=7)))
    expected = _bash_values(words)
    ours = [unquote(desugar(word).text) for word in words]
    mismatches = [(w, o, e) for w, o, e in zip(words, ours, expected, strict=True) if o != e]
    assert mismatches == []


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("$'rm' -f x", "'rm' -f x"),
        ("r$'m'", "r'm'"),
        ("$'\\x72\\x6d'", "'rm'"),
        ("$'a\\'b'", "'a'\\''b'"),
        ("echo '$' $'x'", "echo '$' 'x'"),
        ("echo \"$(echo $'\\x41')\"", "echo \"$(echo 'A')\""),
        ("echo $'x' # $'y'", "echo 'x' "),
        ("cat <<< $'a\\nb'", "cat <<< 'a\nb'"),
        ('$"rm" x', '"rm" x'),
        ("cat <<EOF\n$'x'\nEOF\necho $'y'", "cat <<EOF\n$'x'\nEOF\necho 'y'"),
        ("cat <<'EOF' > f\n$(x) $'y'\nEOF", "cat <<EOF > f\n$(x) $'y'\nEOF"),
        ("cat <<-\\E\n\tx\n\tE", "cat <<-E\n\tx\n\tE"),
    ],
)
def test_desugar(text: str, rewritten: str) -> None:
    assert desugar(text).text == rewritten


def test_locale_strings_are_reported_as_computed_at_run_time() -> None:
    assert desugar('echo $"hi" x').locale_spans == ((5, 9),)


@pytest.mark.parametrize(
    "text",
    ["cat <<'EOF'\nx", "echo ${x:-$'a'}", "echo `echo $'a'`", "echo \"$'x'\"", "echo $'x"],
)
def test_unclear_quoting_is_refused_not_guessed(text: str) -> None:
    with pytest.raises(Unclear):
        desugar(text)
