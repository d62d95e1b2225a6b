"""Bash builtins and small utilities that run code given as a string or change what later commands
run: `eval`, `trap`, `alias`, `hash -p`, `source`, `script -c`, `su -c`, `watch`, `parallel`,
`find -exec`, `mapfile -C`, `declare -i`, `let`, and assignments to variables such as `BASH_ENV`,
`PATH` or `GIT_EXTERNAL_DIFF`. See `agent.shell.programs` for how the parser uses `Effects`."""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.shell.words import Effects, Script, Words, code_string, script_operand

# Variables whose value is code, a file run as code, or changes which program a name runs: an
# assignment to one makes what the command does invisible to a rule.
_CODE_VARIABLES = frozenset(
    {"BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS",
     "BASHOPTS", "PATH", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "NODE_OPTIONS", "PERL5OPT",
     "PERL5LIB", "RUBYOPT", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "GIT_SSH",
     "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
     "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_CONFIG_PARAMETERS",
     "GIT_CONFIG_COUNT", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR",
     "GIT_WORK_TREE", "GIT_EXEC_PATH", "GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "LESSOPEN",
     "LESSCLOSE", "BROWSER", "SHELL", "MAKEFLAGS", "CDPATH", "IFS", "TEXTDOMAIN", "TEXTDOMAINDIR",
     "BASH_LOADABLES_PATH", "EXECIGNORE", "npm_config_script_shell", "NPM_CONFIG_SCRIPT_SHELL"}
)  # fmt: skip
_CODE_VARIABLE_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "BASH_FUNC_")
ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=(.*)", re.DOTALL)
_SUBSCRIPT_CODE = re.compile(r"[A-Za-z_$`(]")


def assignment(word: str, computed: bool, effects: Effects) -> None:
    """`NAME=value` before a command, or as an argument of `export`, `declare`, `env`..."""
    match = ASSIGNMENT.fullmatch(word)
    if match is None:
        return
    name, subscript, value = match.group(1), match.group(2), match.group(3)
    if subscript is not None and _SUBSCRIPT_CODE.search(subscript):
        effects.opaque.append(f"`{word}`: an array subscript is evaluated as arithmetic")
        effects.scripts.append(Script(f": {subscript}", listed=False))
    if name == "HOME":
        effects.changes_home = True
    if name in ("PWD", "OLDPWD"):
        effects.changes_cwd = True
    if name in _CODE_VARIABLES or name.startswith(_CODE_VARIABLE_PREFIXES):
        effects.opaque.append(f"sets {name}, which decides what other commands run")
        if computed:
            effects.hidden.append(f"sets {name} to a value computed at run time")
        else:
            effects.foreign.append(value)
        if name in ("BASH_ENV", "ENV"):
            effects.runs_files.append(value)


def _eval(words: Words, effects: Effects) -> None:
    effects.opaque.append("`eval` runs a string as a command")
    code_string(words, 1, len(words), effects, listed=True)


def _trap(words: Words, effects: Effects) -> None:
    index = 1
    if index < len(words) and words.items[index] == "--":
        index += 1
    if index >= len(words) or words.items[index].startswith("-"):
        return  # `trap -p`, `trap -l`, `trap - SIG`
    if index + 1 >= len(words):
        return  # `trap SIGSPEC`: a lone operand is a signal to reset
    effects.opaque.append("`trap` runs a string as a command later")
    code_string(words, index, index + 1, effects, listed=False)


def _alias(words: Words, effects: Effects) -> None:
    for index in range(1, len(words)):
        word = words.items[index]
        if "=" not in word:
            continue
        effects.opaque.append("`alias` changes what a command name runs")
        if words.expands(index):
            effects.hidden.append("an alias computed at run time")
        else:
            effects.scripts.append(Script(word.split("=", 1)[1], listed=False))


def _shopt(words: Words, effects: Effects) -> None:
    if any(word in ("expand_aliases", "extdebug") for word in words.items[1:]):
        effects.opaque.append("`shopt` makes later commands run aliases or debug traps")


def _hash(words: Words, effects: Effects) -> None:
    for index in range(1, len(words) - 1):
        if words.items[index] == "-p":
            effects.opaque.append("`hash -p` changes what a command name runs")
            if words.expands(index + 1):
                effects.hidden.append("`hash -p` to a path computed at run time")
            else:
                effects.foreign.append(words.items[index + 1])


def _enable(words: Words, effects: Effects) -> None:
    if any(word.startswith("-") and "f" in word for word in words.items[1:]):
        effects.opaque.append("`enable -f` loads code from a file")
        effects.hidden.append("`enable -f` loads a builtin from a shared library")


def _source(words: Words, effects: Effects) -> None:
    effects.opaque.append(f"`{words.items[0]}` runs the code in a file")
    index = 1
    if index < len(words) and words.items[index] == "--":
        index += 1
    if index < len(words):
        script_operand(words, index, effects, shell=True)


def _script(words: Words, effects: Effects) -> None:
    """`script -c CMD`, `-qc CMD`, `-qcCMD`, `--command CMD`, `--command=CMD`."""
    effects.opaque.append("`script` runs a command through a shell")
    for index in range(1, len(words)):
        word = words.items[index]
        if word.startswith("--command="):
            effects.scripts.append(Script(word.split("=", 1)[1], listed=False))
        elif word == "--command":
            code_string(words, index + 1, index + 2, effects, listed=False)
        elif word.startswith("-") and not word.startswith("--") and "c" in word:
            rest = word[word.index("c") + 1 :]
            if rest:
                effects.scripts.append(Script(rest, listed=False))
            else:
                code_string(words, index + 1, index + 2, effects, listed=False)


def _su(words: Words, effects: Effects) -> None:
    effects.opaque.append(f"`{words.items[0]}` runs a command as another user")
    for index in range(1, len(words)):
        word = words.items[index]
        if word in ("-c", "--command", "--session-command"):
            code_string(words, index + 1, index + 2, effects, listed=False)
        elif word.startswith(("--command=", "--session-command=")):
            effects.scripts.append(Script(word.split("=", 1)[1], listed=False))
    if words.name() == "runuser":
        # `runuser -u USER CMD...`
        effects.guesses.extend((start, len(words)) for start in range(1, len(words)))


def _watch(words: Words, effects: Effects) -> None:
    effects.opaque.append("`watch` runs its arguments through a shell, repeatedly")
    index = 1
    while index < len(words) and words.items[index].startswith("-"):
        option = words.items[index]
        index += 2 if option in ("-n", "--interval", "-q", "--equexit") else 1
    effects.guesses.extend((start, len(words)) for start in range(index, len(words)))
    code_string(words, index, len(words), effects, listed=False)


def _parallel(words: Words, effects: Effects) -> None:
    effects.opaque.append("`parallel` runs commands built from its input")
    end = next((i for i, w in enumerate(words.items) if w.startswith(":::")), len(words))
    start = 1
    while start < end and words.items[start].startswith("-"):
        start += 1
    if start >= end:
        effects.hidden.append("`parallel` reads the commands it runs from its input")
        return
    effects.guesses.extend((first, end) for first in range(start, end))
    code_string(words, start, end, effects, listed=False)


def _find(words: Words, effects: Effects) -> None:
    for index, word in enumerate(words.items):
        if word in ("-exec", "-execdir", "-ok", "-okdir") and index + 1 < len(words):
            effects.opaque.append(f"`find {word}` runs a command on every file it finds")
            end = next(
                (i for i in range(index + 1, len(words)) if words.items[i] in (";", "+")),
                len(words),
            )
            effects.guesses.append((index + 1, end))


def _mapfile(words: Words, effects: Effects) -> None:
    for index in range(1, len(words) - 1):
        if words.items[index] == "-C":
            effects.opaque.append(f"`{words.items[0]} -C` runs a callback")
            code_string(words, index + 1, index + 2, effects, listed=False)


def _declare(words: Words, effects: Effects) -> None:
    integer = words.name() != "export"
    for index in range(1, len(words)):
        word = words.items[index]
        if integer and word.startswith("-") and "i" in word:
            effects.opaque.append("integer variables evaluate their values as arithmetic")
        assignment(word, words.expands(index), effects)


def _let(words: Words, effects: Effects) -> None:
    effects.opaque.append("`let` evaluates arithmetic, which can run array subscripts")


def _cwd(words: Words, effects: Effects) -> None:
    effects.changes_cwd = True


HANDLERS: dict[str, Callable[[Words, Effects], None]] = {
    "eval": _eval,
    "trap": _trap,
    "alias": _alias,
    "shopt": _shopt,
    "hash": _hash,
    "enable": _enable,
    "source": _source,
    ".": _source,
    "script": _script,
    "su": _su,
    "runuser": _su,
    "watch": _watch,
    "parallel": _parallel,
    "find": _find,
    "mapfile": _mapfile,
    "readarray": _mapfile,
    "export": _declare,
    "declare": _declare,
    "typeset": _declare,
    "local": _declare,
    "readonly": _declare,
    "let": _let,
    "cd": _cwd,
    "pushd": _cwd,
    "popd": _cwd,
}
