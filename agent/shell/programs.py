"""What a simple command runs besides itself: the knowledge the permission parser has of programs.

`analyse` looks at one simple command's words (after quote removal, without leading assignments)
and reports, in `Effects`, the code it runs that its own words do not show:

- the command a *wrapper* runs (`timeout 5 X`, `sudo X`, `nice -n 5 X`, `env A=1 X`), read with
  the wrapper's own option syntax; when the options cannot be read, every later word might start
  the command (`guesses`, for deny and ask rules only);
- shell code in a string (`sh -c '...'` with any options, `eval`, `trap`, `alias`, `su -c`,
  `script -c`, `flock -c`, `watch`, `git -c alias.x='!...'`) or on stdin (`sh`, `bash -s`,
  `bash /dev/stdin`, `source /dev/stdin`);
- code in another language (`python -c`, `perl -e`, `node -e`, an awk program...): `foreign`,
  which the gate cannot read and only scans for a deny rule's words;
- code that is not in the command line at all (`eval "$X"`, `bash <(curl ...)`, `... | sh`):
  `hidden`, which every deny and ask rule for Bash could match.

Anything in `opaque` makes the command one no allow rule can admit (only a bare `Bash` rule):
what it runs is decided by data the rule cannot see.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from agent.shell import builtins as shell_builtins
from agent.shell import git as shell_git
from agent.shell import scripts as shell_scripts
from agent.shell.builtins import ASSIGNMENT, assignment
from agent.shell.words import (
    Effects,
    Script,
    Words,
    WrapKind,
    code_string,
    option_set,
    script_operand,
    speculate,
)

SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox", "rbash", "yash", "posh",
     "oksh", "loksh", "fish", "csh", "tcsh"}
)  # fmt: skip
"""Commands that run a string or stdin as shell code."""
_BASH_LIKE = SHELLS - {"fish", "csh", "tcsh"}
_SHELL_ARG_LETTERS = "oO"
_SHELL_LONG = frozenset(
    {"--norc", "--noprofile", "--login", "--posix", "--verbose", "--noediting", "--restricted",
     "--debugger", "--dump-strings", "--dump-po-strings", "--wordexp", "--protected", "--help",
     "--version", "--pretty-print", "--no-rcs", "--no-globalrcs"}
)  # fmt: skip
_SHELL_RC_OPTIONS = frozenset({"--rcfile", "--init-file"})
_SHELL_LETTERS = frozenset("abefhkmnptuvxBCEHPTilrDsVcoO0123456789")


def analyse(words: Words) -> Effects:
    """What `words` (a simple command without its leading assignments) runs; see the module
    docstring."""
    effects = Effects()
    if not words.items or words.expands(0):
        return effects
    name = words.name()
    if name in SHELLS:
        _shell(words, effects)
    elif name == "env":
        _env(words, effects)
    elif name == "flock":
        _flock(words, effects)
    elif name in _WRAPPERS:
        _wrapper(words, _WRAPPERS[name], effects)
    elif name in shell_builtins.HANDLERS:
        shell_builtins.HANDLERS[name](words, effects)
    elif name in _SPECULATIVE:
        speculate(words, 1, effects)
    elif name == "git":
        shell_git.analyse(words, effects)
    else:
        shell_scripts.analyse(words, effects)
    _scan_words(words, effects)
    return effects


# ---------------------------------------------------------------------------------- shells


def _shell(words: Words, effects: Effects) -> None:
    if words.name() == "busybox":
        if len(words) > 1:
            effects.inner = (1, "transparent")
        return
    dash_c, dash_s, precise = False, False, True
    index = 1
    while index < len(words):
        word = words.items[index]
        if words.expands(index):
            # after `-c` the first operand is the script; before it, options might be anything
            precise = dash_c
            break
        if word in ("--", "-"):
            index += 1
            break
        if word.startswith("--"):
            option = word.split("=", 1)[0]
            if option in _SHELL_RC_OPTIONS:
                effects.opaque.append(f"`{option}` runs a start-up file")
                if "=" not in word and index + 1 < len(words):
                    effects.runs_files.append(words.items[index + 1])
                    index += 1
            elif option not in _SHELL_LONG:
                precise = False
            index += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            for letter in word[1:]:
                if letter == "c" and word[0] == "-":
                    dash_c = True
                elif letter == "s":
                    dash_s = True
                elif letter in _SHELL_ARG_LETTERS:
                    index += 1
                elif letter not in _SHELL_LETTERS:
                    precise = False
            index += 1
            continue
        break
    name = words.name()
    listed = precise and name in _BASH_LIKE
    if not precise:
        effects.opaque.append(f"cannot read the options given to `{name}`")
        for start in range(1, len(words)):
            if not words.expands(start):
                effects.scripts.append(Script(words.items[start], listed=False))
    if dash_c:
        if index >= len(words):
            return
        if words.expands(index):
            effects.hidden.append(f"`{name} -c` runs a string computed at run time")
        elif name in _BASH_LIKE:
            effects.scripts.append(Script(words.items[index], listed=listed))
        else:
            effects.opaque.append(f"`{name} -c` runs code in another shell language")
            effects.foreign.append(words.items[index])
        return
    if index < len(words) and not dash_s:
        script_operand(words, index, effects, shell=True)
        return
    effects.reads_stdin = True


# -------------------------------------------------------------------------------- wrappers


@dataclass(frozen=True, slots=True)
class _Wrapper:
    kind: WrapKind
    short_args: str = ""
    """Short options that take an argument."""
    long_args: frozenset[str] = frozenset()
    short_flags: str | None = None
    """Known short options without an argument; None: any letter is a flag."""
    operands: int = 0
    """Words between the options and the command (`timeout`'s duration)."""
    no_command: str = ""
    """Short options that mean no command runs (`command -v`)."""
    cwd_options: frozenset[str] = frozenset()


_WRAPPERS: dict[str, _Wrapper] = {
    "timeout": _Wrapper(
        "transparent", "sk", frozenset({"--signal", "--kill-after"}), "v", operands=1
    ),
    "nice": _Wrapper("transparent", "n", frozenset({"--adjustment"}), "0123456789"),
    "nohup": _Wrapper("transparent", short_flags=""),
    "stdbuf": _Wrapper("transparent", "ioe", frozenset({"--input", "--output", "--error"}), ""),
    "ionice": _Wrapper("transparent", "cn", frozenset({"--class", "--classdata"}), "t", 0, "pPu"),
    "setsid": _Wrapper("transparent", short_flags="cfw"),
    "chronic": _Wrapper("transparent", short_flags="evb"),
    "unbuffer": _Wrapper("transparent", short_flags="p"),
    "command": _Wrapper("transparent", short_flags="p", no_command="vV"),
    "builtin": _Wrapper("transparent", short_flags=""),
    "exec": _Wrapper("transparent", "a", short_flags="cl"),
    "time": _Wrapper("transparent", "fo", frozenset({"--format", "--output"}), "apqv"),
    "flock": _Wrapper(
        "transparent", "wE", frozenset({"--timeout", "--conflict-exit-code"}), "sxeunoFhV", 1
    ),
    "sudo": _Wrapper(
        "explicit",
        "ugCDhprtTU",
        option_set(
            "--user --group --close-from --chdir --host --prompt --role --type --command-timeout "
            "--other-user"
        ),
        "AbEHiKknPSsBN",
        no_command="lvKV",
        cwd_options=frozenset({"-D", "--chdir"}),
    ),
    "doas": _Wrapper("explicit", "u", short_flags="nsL", no_command="C"),
    "chroot": _Wrapper("explicit", "", frozenset({"--userspec", "--groups"}), "", operands=1),
    "xargs": _Wrapper(
        "opaque",
        "adEILnPs",
        option_set(
            "--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var "
            "--max-lines --replace --eof"
        ),
        None,
    ),
}
_SPECULATIVE = frozenset(
    {"strace", "ltrace", "valgrind", "nsenter", "unshare", "setpriv", "pkexec", "firejail",
     "bwrap", "systemd-run", "taskset", "numactl", "chrt", "prlimit", "faketime", "fakeroot",
     "eatmydata", "proxychains", "proxychains4", "torsocks", "xvfb-run", "dbus-run-session",
     "ssh-agent", "catchsegv", "cgexec", "trickle", "nocache", "rlwrap", "entr", "caffeinate",
     "sg", "runcon"}
)  # fmt: skip


def _wrapper(words: Words, spec: _Wrapper, effects: Effects) -> None:
    index = 1
    name = words.name()
    while index < len(words):
        word = words.items[index]
        if words.expands(index):
            speculate(words, index, effects)
            return
        if word == "--":
            index += 1
            break
        if word.startswith("--") and len(word) > 2:
            option = word.split("=", 1)[0]
            if option in spec.cwd_options:
                effects.changes_cwd = True
            if option in spec.long_args and "=" not in word:
                index += 1
            index += 1
            continue
        if word.startswith("-") and len(word) > 1:
            for offset, letter in enumerate(word[1:], start=1):
                if letter in spec.no_command:
                    return
                if letter in spec.short_args:
                    if f"-{letter}" in spec.cwd_options:
                        effects.changes_cwd = True
                    if offset == len(word) - 1:
                        index += 1
                    break
                if spec.short_flags is not None and letter not in spec.short_flags:
                    speculate(words, index, effects)
                    return
            index += 1
            continue
        break
    if name == "xargs":
        if index >= len(words):
            return
        effects.opaque.append("`xargs` runs a command with arguments read from its input")
    index += spec.operands
    if index >= len(words):
        if name == "chroot":
            effects.reads_stdin = True
        return
    effects.inner = (index, spec.kind)


# ------------------------------------------------------------------ commands that run code


def _env(words: Words, effects: Effects) -> None:
    items = list(words.items)
    computed = list(words.computed) + [False] * (len(items) - len(words.computed))
    index = 1
    split = False
    assigns = False
    while index < len(items):
        word = items[index]
        if computed[index]:
            speculate(words, min(index, len(words) - 1), effects)
            return
        if word == "--":
            index += 1
            break
        string = _split_string_option(word, items, index)
        if string is not None:
            # `env -S 'rm -f f'` and `env '-Srm -f f'`: the string is split into words that
            # take the option's place (and may be options, assignments or the command)
            text, consumed = string
            split = True
            effects.opaque.append("`env -S` splits a string into a command")
            if "${" in text:
                effects.hidden.append("`env -S` expands variables at run time")
            try:
                parts = shlex.split(text.replace("\\_", " "), comments=True)
            except ValueError:
                effects.hidden.append("an `env -S` string that cannot be split")
                return
            items[index : index + consumed] = parts
            computed[index : index + consumed] = [False] * len(parts)
            continue
        if word.startswith("--"):
            option = word.split("=", 1)[0]
            if option == "--chdir":
                effects.changes_cwd = True
            if option in ("--unset", "--chdir") and "=" not in word:
                index += 1
            index += 1
            continue
        if word.startswith("-") and len(word) > 1:
            for offset, letter in enumerate(word[1:], start=1):
                if letter in "uC":
                    effects.changes_cwd = effects.changes_cwd or letter == "C"
                    if offset == len(word) - 1:
                        index += 1
                    break
                if letter not in "i0v":
                    speculate(words, min(index, len(words) - 1), effects)
                    return
            index += 1
            continue
        if ASSIGNMENT.fullmatch(word):
            assignment(word, computed[index], effects)
            assigns = True
            index += 1
            continue
        break
    if index >= len(items):
        return
    if split:
        # the command came out of a string: read it as shell text, for deny and ask rules
        effects.scripts.append(Script(shlex.join(items[index:]), listed=False))
        return
    effects.inner = (index, "explicit" if assigns else "transparent")


def _split_string_option(word: str, items: list[str], index: int) -> tuple[str, int] | None:
    if word.startswith("--split-string"):
        if "=" in word:
            return word.split("=", 1)[1], 1
        return (items[index + 1], 2) if index + 1 < len(items) else None
    if word.startswith("-") and not word.startswith("--") and "S" in word:
        rest = word[word.index("S") + 1 :]
        if rest:
            return rest, 1
        return (items[index + 1], 2) if index + 1 < len(items) else None
    return None


def _flock(words: Words, effects: Effects) -> None:
    for index in range(1, len(words)):
        word = words.items[index]
        if word in ("-c", "--command") and index + 1 < len(words):
            effects.opaque.append("`flock -c` runs a string through a shell")
            code_string(words, index + 1, index + 2, effects, listed=False)
            return
    _wrapper(words, _WRAPPERS["flock"], effects)


# ---------------------------------------------------------------------------------- words

_SUBSTITUTION = re.compile(r"\$\(|`|\$\[|<\(|>\(")
_SUBSCRIPTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[^\]]*[$`]")


def _scan_words(words: Words, effects: Effects) -> None:
    """`printf -v 'a[$(cmd)]'`, `test -v`, `read`, `unset`... evaluate an array subscript in a
    word that was quoted (so the substitution did not run when the word was expanded): it runs
    then."""
    for index in range(1, len(words)):
        word = words.items[index]
        if "[" in word and (_SUBSTITUTION.search(word) or _SUBSCRIPTED_NAME.search(word)):
            effects.opaque.append(
                f"`{word}`: an array subscript that bash may evaluate, running what it holds"
            )
            if not words.expands(index):
                # what the subscript would run, read as shell text, for deny and ask rules
                effects.scripts.append(Script(f": {word}", listed=False))
            return
