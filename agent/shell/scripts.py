"""Code in other languages a command runs: interpreters given code on the command line or on
stdin (`python -c`, `perl -e`, `node -e`...), awk and sed programs that run commands or write
files, and the options of ordinary programs that run a command (`tar --to-command`, `rsync -e`,
`ssh -o ProxyCommand=`, `rg --pre`, `vim -c`...). The gate cannot read such code: it makes the
command opaque to allow rules, and deny rules only scan it for their words."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.shell.words import Effects, Words, code_string, foreign_code, option_set, script_operand

_INTERPRETER_NAME = re.compile(
    r"(python|pypy|perl|ruby|node|nodejs|bun|deno|php|lua|luajit|Rscript|R|julia|osascript|pwsh|"
    r"powershell|groovy|scala|jshell|tclsh|wish|expect|gawk|mawk|nawk|awk)[0-9.]*(\.exe)?"
)
_CODE_FLAGS: dict[str, tuple[str, frozenset[str]]] = {
    # family: (short letters whose argument is code, long options whose argument is code)
    "python": ("c", frozenset()),
    "pypy": ("c", frozenset()),
    "perl": ("eE", frozenset()),
    "ruby": ("e", frozenset()),
    "node": ("ep", frozenset({"--eval", "--print"})),
    "nodejs": ("ep", frozenset({"--eval", "--print"})),
    "bun": ("ep", frozenset({"--eval", "--print"})),
    "deno": ("", frozenset({"eval"})),
    "php": ("rBRE", frozenset()),
    "lua": ("e", frozenset()),
    "luajit": ("e", frozenset()),
    "Rscript": ("e", frozenset()),
    "R": ("e", frozenset()),
    "julia": ("eE", frozenset({"--eval", "--print"})),
    "osascript": ("e", frozenset()),
    "groovy": ("e", frozenset()),
    "scala": ("e", frozenset()),
    "expect": ("c", frozenset()),
    "pwsh": ("ce", option_set("-command -encodedcommand -ec -c -e")),
    "powershell": ("ce", option_set("-command -encodedcommand -ec -c -e")),
}
_ARG_LETTERS = {"python": "WXQ", "pypy": "WXQ", "node": "rC", "nodejs": "rC", "perl": "IM"}
_STOP_LETTERS = {"python": "m", "pypy": "m"}
_AWKS = option_set("awk gawk mawk nawk")


def analyse(words: Words, effects: Effects) -> None:
    """Code `words` runs in another language, if its program is one this module knows."""
    name = words.name()
    match = _INTERPRETER_NAME.fullmatch(name)
    if match is not None and match.group(1) in _AWKS:
        _awk(words, effects)
    elif match is not None:
        _interpreter(words, match.group(1), effects)
    elif name == "sed":
        _sed(words, effects)
    elif name in _RUNS_COMMANDS:
        _options_that_run(words, _RUNS_COMMANDS[name], effects)


def _interpreter(words: Words, family: str, effects: Effects) -> None:
    letters, longs = _CODE_FLAGS.get(family, ("", frozenset[str]()))
    arg_letters = _ARG_LETTERS.get(family, "")
    stop_letters = _STOP_LETTERS.get(family, "")
    caseless = family in ("pwsh", "powershell")
    index = 1
    while index < len(words):
        word = words.items[index]
        if word == "--":
            index += 1
            break
        option = (word.lower() if caseless else word).split("=", 1)[0]
        if option in longs:
            if "=" in word:
                foreign_code(words, index, effects, code=word.split("=", 1)[1])
            else:
                foreign_code(words, index + 1, effects)
            return
        if word == "-":
            break
        if word.startswith("--"):
            index += 1
            continue
        if word.startswith("-") and len(word) > 1 and not caseless:
            for offset, letter in enumerate(word[1:], start=1):
                if letter in letters:
                    rest = word[offset + 1 :]
                    if rest:
                        foreign_code(words, index, effects, code=rest)
                    else:
                        foreign_code(words, index + 1, effects)
                    return
                if letter in stop_letters:
                    return  # `python -m module`: runs a file, like a script
                if letter in arg_letters:
                    if offset == len(word) - 1:
                        index += 1
                    break
            index += 1
            continue
        if word.startswith("-") and caseless:
            index += 1
            continue
        break
    if index >= len(words) or words.items[index] == "-":
        effects.foreign_stdin = True
    else:
        script_operand(words, index, effects, shell=False)


# -------------------------------------------------------------------------------------- awk

_AWK_CODE = re.compile(r"\bsystem\s*\(|(?<!\|)\|(?!\|)|\bgetline\b|@load|@include|/inet")
_AWK_OUTPUT = re.compile(r"\bprintf?\b[^;{}\n]*>")


def _awk(words: Words, effects: Effects) -> None:
    index = 1
    while index < len(words):
        word = words.items[index]
        if word in ("-f", "--file", "-e", "--source", "-i", "--include", "-l", "--load", "-E"):
            effects.opaque.append(f"`{words.items[0]} {word}` loads code")
            if word in ("-e", "--source"):
                foreign_code(words, index + 1, effects)
            elif index + 1 < len(words):
                script_operand(words, index + 1, effects, shell=False)
            return
        if word in ("-F", "-v", "--field-separator", "--assign"):
            index += 2
            continue
        if word == "--":
            index += 1
            break
        if word.startswith("-") and len(word) > 1:
            index += 1
            continue
        break
    if index >= len(words):
        return
    if words.expands(index):
        effects.opaque.append("an awk program computed at run time")
        effects.hidden.append("an awk program computed at run time")
        return
    program = words.items[index]
    if _AWK_CODE.search(program) or _AWK_OUTPUT.search(program):
        effects.opaque.append("the awk program runs commands or writes files")
        effects.foreign.append(program)


def awk_writes(words: Words) -> bool:
    """Whether an awk command's program may write files (`print > "f"`)."""
    return any(_AWK_OUTPUT.search(word) for word in words.items[1:])


# -------------------------------------------------------------------------------------- sed


@dataclass(frozen=True, slots=True)
class SedCommand:
    script_given: bool
    """False: no script (`sed` alone); the first operand would be it."""
    runs_code: bool
    """An `e` command or `s///e` flag, a script file (`-f`), or a script this reader cannot
    follow."""
    writes: tuple[str, ...]
    """Files the script's `w` commands and flags write."""
    in_place: bool
    operands: tuple[int, ...]
    """Indices of the file operands (written when `in_place`)."""


def read_sed(words: Words) -> SedCommand:
    scripts: list[str] = []
    from_file = False
    in_place = False
    operands: list[int] = []
    index = 1
    options_done = False
    while index < len(words):
        word = words.items[index]
        if options_done or not word.startswith("-") or word == "-":
            operands.append(index)
        elif word == "--":
            options_done = True
        elif word in ("-e", "--expression"):
            index += 1
            if index < len(words):
                scripts.append(words.items[index])
        elif word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
        elif word in ("-f", "--file") or word.startswith("--file="):
            from_file = True
            index += 0 if "=" in word else 1
        elif word in ("-l", "--line-length"):
            index += 1
        elif word.startswith("--in-place") or word.startswith("-i"):
            in_place = True
        elif word.startswith("-") and not word.startswith("--"):
            letters = word[1:]
            in_place = in_place or "i" in letters
            if "e" in letters or "f" in letters:
                from_file = from_file or "f" in letters
                rest = letters[letters.index("e" if "e" in letters else "f") + 1 :]
                if rest and "e" in letters:
                    scripts.append(rest)
                elif index + 1 < len(words):
                    index += 1
                    if "e" in letters:
                        scripts.append(words.items[index])
        index += 1
    if not scripts and not from_file and operands:
        scripts.append(words.items[operands.pop(0)])
    runs_code = from_file
    writes: list[str] = []
    for script in scripts:
        code, written = _sed_script(script)
        runs_code = runs_code or code
        writes.extend(written)
    return SedCommand(bool(scripts) or from_file, runs_code, tuple(writes), in_place,
                      tuple(operands))  # fmt: skip


def _sed(words: Words, effects: Effects) -> None:
    command = read_sed(words)
    if command.runs_code:
        effects.opaque.append("the sed script runs commands or comes from a file")
        effects.foreign.extend(words.items[1:])


_SED_PLAIN = frozenset("=dDgGhHnNpPxzF{}")


def _sed_script(script: str) -> tuple[bool, list[str]]:
    """(runs code, files written) for a sed script; a script this reader cannot follow counts
    as running code."""
    reader = _SedReader(script)
    try:
        reader.read()
    except _Unfollowable:
        return True, reader.writes
    return reader.code, reader.writes


class _Unfollowable(Exception):
    pass


class _SedReader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.code = False
        self.writes: list[str] = []

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def read(self) -> None:
        while True:
            while self.peek() and self.peek() in " \t\n;":
                self.pos += 1
            if not self.peek():
                return
            self.address()
            if self.peek() == ",":
                self.pos += 1
                self.address()
            while self.peek() in (" ", "\t", "!"):
                self.pos += 1
            self.command()

    def address(self) -> None:
        char = self.peek()
        if char.isdigit() or char in "+~":
            self.pos += 1
            while self.peek().isdigit() or self.peek() == "~":
                self.pos += 1
        elif char == "$":
            self.pos += 1
        elif char in ("/", "\\"):
            if char == "\\":
                self.pos += 1
            self.delimited(self.peek())
            while self.peek() in ("I", "M"):
                self.pos += 1

    def delimited(self, delimiter: str) -> None:
        """Skip `delimiter`...`delimiter`, starting at the opening one."""
        if not delimiter or delimiter in "\n\\":
            raise _Unfollowable
        self.pos += 1
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\":
                self.pos += 2
                continue
            self.pos += 1
            if char == delimiter:
                return
        raise _Unfollowable

    def rest_of_line(self) -> str:
        end = self.text.find("\n", self.pos)
        end = len(self.text) if end < 0 else end
        value = self.text[self.pos : end].strip()
        self.pos = end
        return value

    def label(self) -> None:
        while self.peek() and self.peek() not in ";\n}":
            self.pos += 1

    def command(self) -> None:
        char = self.peek()
        self.pos += 1
        if char in _SED_PLAIN:
            return
        if char in "btT:v":
            self.label()
        elif char == "#":
            self.rest_of_line()
        elif char in "aic":
            while True:  # text, with `\` continuing it onto the next line
                line = self.rest_of_line()
                if not line.endswith("\\") or self.pos >= len(self.text):
                    return
                self.pos += 1
        elif char in "rR":
            self.rest_of_line()
        elif char in "wW":
            self.writes.append(self.rest_of_line())
        elif char == "e":
            self.code = True
            self.rest_of_line()
        elif char in "qQlL":
            while self.peek() == " " or self.peek().isdigit():
                self.pos += 1
        elif char == "y":
            delimiter = self.peek()
            self.delimited(delimiter)
            self.pos -= 1
            self.delimited(delimiter)
        elif char == "s":
            self.substitution()
        else:
            raise _Unfollowable

    def substitution(self) -> None:
        delimiter = self.peek()
        self.delimited(delimiter)
        self.pos -= 1
        self.delimited(delimiter)
        while self.peek() and self.peek() not in ";\n}":
            flag = self.peek()
            self.pos += 1
            if flag == "e":
                self.code = True
            elif flag == "w":
                self.writes.append(self.rest_of_line())
                return
            elif not (flag.isdigit() or flag in "gpiImM \t"):
                raise _Unfollowable


# ------------------------------------------------------- ordinary programs that run commands


@dataclass(frozen=True, slots=True)
class _RunOptions:
    code: frozenset[str] = frozenset()
    """Options whose value is a command (`--to-command=CMD` or `--to-command CMD`)."""
    code_letters: str = ""
    """Short options whose value is a command (`-e CMD`, bundled `-avze CMD`)."""
    value_code: re.Pattern[str] | None = None
    """`-o KEY=VALUE` style options whose KEY makes the value a command."""
    value_letters: str = ""
    shell: bool = False
    """The command is shell code (walked for deny rules) rather than a program name."""
    rest_is_command: bool = False
    """The command is the option's value and every word after it (`fd -x rm -f`)."""


_RUNS_COMMANDS: dict[str, _RunOptions] = {
    "tar": _RunOptions(
        option_set(
            "--to-command --use-compress-program --info-script --new-volume-script --rsh-command "
            "--checkpoint-action"
        ),
        "IF",
        shell=True,
    ),
    "rsync": _RunOptions(frozenset({"--rsh", "--rsync-path"}), "e", shell=True),
    "ssh": _RunOptions(
        frozenset(), "", re.compile(r"(?i)\s*(proxycommand|localcommand|knownhostscommand)"), "o"
    ),
    "scp": _RunOptions(
        frozenset(), "S", re.compile(r"(?i)\s*(proxycommand|localcommand|knownhostscommand)"), "o"
    ),
    "sftp": _RunOptions(
        frozenset(), "S", re.compile(r"(?i)\s*(proxycommand|localcommand|knownhostscommand)"), "o"
    ),
    "sort": _RunOptions(frozenset({"--compress-program"})),
    "zip": _RunOptions(frozenset({"--unzip-command"}), "", shell=True),
    "man": _RunOptions(frozenset({"--pager", "--html"}), "PH", shell=True),
    "rg": _RunOptions(frozenset({"--pre"})),
    "fd": _RunOptions(frozenset({"--exec", "--exec-batch"}), "xX", rest_is_command=True),
    "fdfind": _RunOptions(frozenset({"--exec", "--exec-batch"}), "xX", rest_is_command=True),
    "make": _RunOptions(frozenset({"--eval"}), "E"),
    "gdb": _RunOptions(option_set("--eval-command -ex --command -x")),
    "vim": _RunOptions(frozenset({"--cmd", "-c", "-S"}), "cS"),
    "vi": _RunOptions(frozenset({"--cmd", "-c", "-S"}), "cS"),
    "nvim": _RunOptions(option_set("--cmd -c -S -l"), "cS"),
    "ex": _RunOptions(frozenset({"--cmd", "-c", "-S"}), "cS"),
    "view": _RunOptions(frozenset({"--cmd", "-c", "-S"}), "cS"),
    "emacs": _RunOptions(option_set("--eval -eval --exec -l --load -f")),
    "npx": _RunOptions(frozenset({"--call"}), "c", shell=True),
    "npm": _RunOptions(frozenset({"--call"}), "c", shell=True),
    "sqlite3": _RunOptions(frozenset({"-cmd"})),
}
_ZIP_TT = frozenset({"-TT"})


def _options_that_run(words: Words, spec: _RunOptions, effects: Effects) -> None:
    name = words.name()
    for index in range(1, len(words)):
        word = words.items[index]
        code_at: int | None = None
        code: str | None = None
        option, equals, value = word.partition("=")
        if option in spec.code or (name == "zip" and word in _ZIP_TT):
            if equals:
                code = value
            else:
                code_at = index + 1
        elif name in ("vim", "vi", "nvim", "ex", "view") and word.startswith("+"):
            code = word[1:]
        elif name == "sqlite3" and re.match(r"\s*\.(shell|system|sh|load|output|once)", word):
            code = word
        elif word.startswith("-") and not word.startswith("--") and len(word) > 1:
            letters = word[1:]
            for offset, letter in enumerate(letters):
                if letter in spec.code_letters or letter in spec.value_letters:
                    rest = letters[offset + 1 :]
                    text = rest or (words.items[index + 1] if index + 1 < len(words) else "")
                    if letter in spec.value_letters:
                        if spec.value_code is not None and spec.value_code.match(text):
                            code = text.split("=", 1)[-1]
                        break
                    if rest:
                        code = rest
                    else:
                        code_at = index + 1
                    break
        if code_at is not None and code_at < len(words):
            if words.expands(code_at):
                effects.opaque.append(f"`{name}` runs a command computed at run time")
                effects.hidden.append(f"`{name} {word}` runs a command computed at run time")
                continue
            code = words.items[code_at]
            if spec.rest_is_command:
                effects.guesses.append((code_at, len(words)))
        if code is None:
            continue
        effects.opaque.append(f"`{name} {option}` runs a command")
        effects.foreign.append(code)
        if spec.shell:
            code_string(Words((name, code), (False, False)), 1, 2, effects, listed=False)
