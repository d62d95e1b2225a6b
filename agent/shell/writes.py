"""Files a command writes through its arguments rather than a redirection.

The policy asks before a write outside the workspace roots; for a shell command it can only know
the writes someone described to it. This module describes the common writers: `cp`, `mv`,
`install`, `ln`, `touch`, `mkdir`, `rm`, `tee`, `truncate`, `chmod`, `dd of=`, `sort -o`,
`uniq IN OUT`, `split`, `sed -i` and sed's `w`, `tar -f`/`-C`, `unzip -d`, `zip`, `patch`,
`rsync`/`scp` destinations, `curl -o`, `wget -O`, `find -fprint`/`-delete`, the compressors,
`git diff --output`, `git format-patch -o`, `git archive -o`, `git clone DIR`, `git -C DIR`...

An arbitrary program can write anywhere; the operating-system sandbox is what stops that. This
list only lets the gate ask, without a sandbox, before the writes a reader of the command line
would see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from agent.shell import git as shell_git
from agent.shell import scripts as shell_scripts
from agent.shell.words import Words, option_set

Target: TypeAlias = tuple[str, bool]
"""A path as written, and whether bash computes it at run time."""
_Operands: TypeAlias = Literal["all", "last", "all-but-first", "first", "second", "none"]


@dataclass(frozen=True, slots=True)
class _Writer:
    operands: _Operands
    value_short: str = ""
    """Short options that take a value that is not a written path."""
    value_long: frozenset[str] = frozenset()
    write_short: str = ""
    """Short options whose value is a path written."""
    write_long: frozenset[str] = frozenset()


_CP_LIKE = _Writer(
    "last",
    "S",
    frozenset({"--suffix"}),
    "t",
    frozenset({"--target-directory"}),
)
_WRITERS: dict[str, _Writer] = {
    "cp": _CP_LIKE,
    "install": _Writer(
        "last",
        "mgoS",
        option_set("--mode --owner --group --suffix"),
        "t",
        frozenset({"--target-directory"}),
    ),
    "mv": _Writer("all", "S", frozenset({"--suffix"}), "t", frozenset({"--target-directory"})),
    "ln": _Writer("last", "S", frozenset({"--suffix"}), "t", frozenset({"--target-directory"})),
    "touch": _Writer("all", "dtr", frozenset({"--date", "--reference"})),
    "mkdir": _Writer("all", "m", frozenset({"--mode"})),
    "rmdir": _Writer("all"),
    "rm": _Writer("all"),
    "unlink": _Writer("all"),
    "shred": _Writer("all", "ns", frozenset({"--iterations", "--size", "--random-source"})),
    "truncate": _Writer("all", "sr", frozenset({"--size", "--reference"})),
    "mkfifo": _Writer("all", "m", frozenset({"--mode"})),
    "tee": _Writer("all"),
    "chmod": _Writer("all-but-first"),
    "chown": _Writer("all-but-first"),
    "chgrp": _Writer("all-but-first"),
    "sort": _Writer(
        "none",
        "ktSTz",
        option_set("--key --field-separator --buffer-size --files0-from --batch-size --parallel"),
        "oT",
        frozenset({"--output", "--temporary-directory"}),
    ),
    "uniq": _Writer("second", "fsw", frozenset({"--skip-fields", "--skip-chars", "--check-chars"})),
    "split": _Writer(
        "second",
        "abClnt",
        option_set(
            "--suffix-length --bytes --line-bytes --lines --number --separator --additional-suffix"
        ),
    ),
    "csplit": _Writer(
        "none", "bn", frozenset({"--suffix-format", "--digits"}), "f", frozenset({"--prefix"})
    ),
    "unzip": _Writer("none", "x", frozenset(), "d"),
    "zip": _Writer("first", "bnt", frozenset(), "O", frozenset({"--output-file"})),
    "patch": _Writer(
        "first",
        "pFDVYzBgi",
        frozenset({"--strip", "--input"}),
        "or",
        frozenset({"--output", "--reject-file"}),
    ),
    "rsync": _Writer(
        "last",
        "f",
        frozenset({"--exclude", "--include", "--filter"}),
        "T",
        option_set(
            "--backup-dir --log-file --temp-dir --partial-dir --write-batch --only-write-batch"
        ),
    ),
    "scp": _Writer("last", "cFiJlPS", frozenset(), ""),
    "curl": _Writer(
        "none",
        "AbCdeEFHKmPrtTuUwxXyYzQ",
        option_set(
            "--data --header --user --request --url --user-agent --data-binary --data-raw --form "
            "--max-time --proxy"
        ),
        "oDc",
        option_set(
            "--output --dump-header --cookie-jar --trace --trace-ascii --stderr --etag-save "
            "--hsts --alt-svc --libcurl --output-dir"
        ),
    ),
    "wget": _Writer(
        "none",
        "eUtT",
        frozenset(),
        "OPoa",
        option_set("--output-document --directory-prefix --output-file --append-output"),
    ),
    "time": _Writer("none", "f", frozenset({"--format"}), "o", frozenset({"--output"})),
    "strace": _Writer("none", "eEpPsSuX", frozenset(), "o", frozenset({"--output"})),
    "ltrace": _Writer("none", "eEpnsSuX", frozenset(), "o", frozenset({"--output"})),
    "script": _Writer(
        "first",
        "cEmo",
        frozenset({"--command"}),
        "IOBT",
        option_set("--log-in --log-out --log-io --log-timing"),
    ),
    "mktemp": _Writer("none", "", frozenset(), "p", frozenset({"--tmpdir"})),
}
_COMPRESSORS = frozenset(
    {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma",
     "unlzma", "compress", "uncompress", "pigz", "unpigz"}
)  # fmt: skip
_TO_STDOUT = option_set("-c --stdout --to-stdout -t --test -l --list")
_FIND_WRITES = option_set("-fprint -fprint0 -fls -fprintf")
_GIT_OUTPUTS = frozenset({"--output", "--output-directory"})


_GIT_CHECKOUTS = option_set(
    "checkout switch reset clone pull merge restore stash worktree am apply rebase cherry-pick "
    "revert read-tree checkout-index"
)


def materializes_links(words: Words) -> bool:
    """Whether the command may create or move a symbolic or hard link (`ln`, `cp -a`, `mv`,
    `tar -x`, `git checkout`...): a later write in the same command line may then go through a
    link the gate could not resolve when it decided."""
    if not words.items:
        return False
    name = words.name()
    flags = "".join(w[1:] for w in words.items[1:] if w.startswith("-") and not w.startswith("--"))
    longs = {w.split("=", 1)[0] for w in words.items[1:] if w.startswith("--")}
    if name in ("ln", "mv", "rsync", "unzip", "cpio", "7z", "bsdtar", "pax"):
        return True
    if name == "cp":
        return bool(set(flags) & set("adPRrs")) or bool(
            longs & {"--archive", "--no-dereference", "--recursive", "--symbolic-link", "--link"}
        )
    if name == "tar":
        first = words.items[1] if len(words) > 1 else ""
        old_style = not first.startswith("-") and "x" in first
        return old_style or "x" in flags or bool(longs & {"--extract", "--get"})
    if name == "git":
        command = shell_git.read(words)
        return command.subcommand is not None and words.items[command.subcommand] in _GIT_CHECKOUTS
    return False


def write_targets(words: Words) -> list[Target]:
    """The paths `words` (a simple command without leading assignments) writes, as written.

    A writer given an argument computed at run time may write anywhere: the argument can be an
    option (`cp "$X" a` with `X=--target-directory=..`, `git diff $(echo --output=../f)`), so it
    counts as a write to a path computed at run time."""
    if not words.items or words.expands(0):
        return []
    name = words.name()
    if name in _WRITERS:
        targets = _generic(words, _WRITERS[name])
    elif name in _COMPRESSORS:
        if any(word in _TO_STDOUT for word in words.items[1:]):
            return []
        targets = _generic(words, _Writer("all", "bSTLp", frozenset(), "o"))
    elif name in _SPECIAL:
        targets = _SPECIAL[name](words)
        if name == "git" and not _git_may_write(words):
            return targets
    else:
        return []
    if any(words.expands(index) for index in range(1, len(words))):
        targets.append((f"(an argument of {name} computed at run time)", True))
    return targets


def _generic(words: Words, spec: _Writer) -> list[Target]:
    targets: list[Target] = []
    operands: list[int] = []
    index = 1
    options_done = False
    while index < len(words):
        word = words.items[index]
        if options_done or not word.startswith("-") or word == "-":
            operands.append(index)
        elif word == "--":
            options_done = True
        elif word.startswith("--"):
            option, equals, value = word.partition("=")
            if option in spec.write_long:
                if equals:
                    targets.append((value, words.expands(index)))
                elif index + 1 < len(words):
                    index += 1
                    targets.append((words.items[index], words.expands(index)))
            elif option in spec.value_long and not equals:
                index += 1
        else:
            for offset, letter in enumerate(word[1:], start=1):
                if letter not in spec.value_short and letter not in spec.write_short:
                    continue
                rest = word[offset + 1 :]
                if rest:
                    value, computed = rest, words.expands(index)
                elif index + 1 < len(words):
                    index += 1
                    value, computed = words.items[index], words.expands(index)
                else:
                    break
                if letter in spec.write_short:
                    targets.append((value, computed))
                break
        index += 1
    name = words.name()
    # with `-t DIR` every operand of `cp`, `ln`, `install` is a source
    chosen = (
        [] if targets and spec.operands == "last" else _choose(spec.operands, operands, name, words)
    )
    targets.extend((words.items[i], words.expands(i)) for i in chosen)
    if name in ("rsync", "scp"):
        targets = [t for t in targets if not _remote(t[0])]
    return targets


def _choose(kind: _Operands, operands: list[int], name: str, words: Words) -> list[int]:
    match kind:
        case "all":
            return operands
        case "last":
            if name == "install" and any(w in ("-d", "--directory") for w in words.items):
                return operands
            if name == "ln" and not any(_symbolic(w) for w in words.items[1:]):
                return operands  # a hard link shares its data with the target
            return operands[-1:] if len(operands) >= 2 else []
        case "all-but-first":
            if any(w.startswith("--reference") for w in words.items):
                return operands
            return operands[1:]
        case "first":
            return operands[:1]
        case "second":
            return operands[1:2]
        case "none":
            return []


def _symbolic(word: str) -> bool:
    if word == "--symbolic":
        return True
    return word.startswith("-") and not word.startswith("--") and "s" in word


def _remote(path: str) -> bool:
    head = path.split("/", 1)[0]
    return ":" in head or path.startswith("rsync://")


def _dd(words: Words) -> list[Target]:
    return [
        (word[3:], words.expands(index))
        for index, word in enumerate(words.items)
        if word.startswith("of=")
    ]


def _sed(words: Words) -> list[Target]:
    command = shell_scripts.read_sed(words)
    targets: list[Target] = [(path, False) for path in command.writes]
    if command.runs_code:
        targets.append(("(a file the sed script names)", True))
    if command.in_place:
        targets.extend((words.items[i], words.expands(i)) for i in command.operands)
    return targets


def _awk(words: Words) -> list[Target]:
    if shell_scripts.awk_writes(words):
        return [("(a file the awk program names)", True)]
    return []


def _find(words: Words) -> list[Target]:
    targets: list[Target] = []
    roots: list[Target] = []
    expression = False
    for index, word in enumerate(words.items[1:], start=1):
        if not expression and (word.startswith("-") or word in ("(", "!")):
            expression = True
        if not expression:
            roots.append((word, words.expands(index)))
        if word in _FIND_WRITES and index + 1 < len(words):
            targets.append((words.items[index + 1], words.expands(index + 1)))
        if word == "-delete":
            targets.extend(roots or [(".", False)])
    return targets


def _tar(words: Words) -> list[Target]:
    targets: list[Target] = []
    creates = False
    archive: Target | None = None
    items = words.items
    index = 1
    if len(items) > 1 and not items[1].startswith("-"):
        # old style: `tar czf out.tgz dir`, the letters' values follow in order
        letters = items[1]
        creates = any(letter in letters for letter in "cruA")
        index = 2
        for letter in letters:
            if letter in "fbTXgKNVLC" and index < len(items):
                if letter == "f":
                    archive = (items[index], words.expands(index))
                elif letter == "C":
                    targets.append((items[index], words.expands(index)))
                index += 1
    while index < len(items):
        word = items[index]
        option, equals, value = word.partition("=")
        if option in ("--create", "--append", "--update", "--concatenate"):
            creates = True
        elif option in ("--file", "--directory"):
            target = (value, words.expands(index)) if equals else None
            if target is None and index + 1 < len(items):
                index += 1
                target = (items[index], words.expands(index))
            if target is not None:
                if option == "--file":
                    archive = target
                else:
                    targets.append(target)
        elif word.startswith("-") and not word.startswith("--"):
            letters = word[1:]
            creates = creates or any(letter in letters for letter in "cruA")
            for offset, letter in enumerate(letters, start=1):
                if letter in "fC":
                    rest = letters[offset:]
                    if not rest and index + 1 < len(items):
                        index += 1
                        value, computed = items[index], words.expands(index)
                    else:
                        value, computed = rest, words.expands(index)
                    if letter == "f":
                        archive = (value, computed)
                    else:
                        targets.append((value, computed))
                    break
        index += 1
    if creates and archive is not None and archive[0] != "-":
        targets.append(archive)
    return targets


def _git(words: Words) -> list[Target]:
    command = shell_git.read(words)
    targets: list[Target] = []
    base = ""
    for option, value, at in command.options:
        if option in ("-C", "--git-dir", "--work-tree") and value is not None:
            targets.append((value, words.expands(at)))
            if option == "-C":
                base = value.rstrip("/") + "/"
    if command.subcommand is None:
        return targets
    sub = words.items[command.subcommand]
    rest = list(range(command.subcommand + 1, len(words)))
    operands = [i for i in rest if not words.items[i].startswith("-")]
    for index in rest:
        option, equals, value = words.items[index].partition("=")
        if option in _GIT_OUTPUTS or (sub in ("format-patch", "archive") and option == "-o"):
            if equals:
                targets.append((_under(base, value), words.expands(index)))
            elif index + 1 < len(words):
                targets.append((_under(base, words.items[index + 1]), words.expands(index + 1)))
    if sub in ("clone", "init") and operands:
        chosen = operands[-1] if sub == "init" or len(operands) >= 2 else None
        if chosen is not None:
            targets.append((_under(base, words.items[chosen]), words.expands(chosen)))
    if sub == "worktree" and len(operands) >= 2 and words.items[operands[0]] == "add":
        targets.append((_under(base, words.items[operands[1]]), words.expands(operands[1])))
    if sub == "bundle" and len(operands) >= 2 and words.items[operands[0]] == "create":
        targets.append((_under(base, words.items[operands[1]]), words.expands(operands[1])))
    return targets


_GIT_WRITING = option_set(
    "diff log show format-patch archive bundle clone init worktree whatchanged range-diff difftool"
)


def _git_may_write(words: Words) -> bool:
    """Whether a git command's computed arguments could name a file to write (`--output=`)."""
    command = shell_git.read(words)
    if command.subcommand is None:
        return False
    return words.expands(command.subcommand) or words.items[command.subcommand] in _GIT_WRITING


def _under(base: str, path: str) -> str:
    if not base or path.startswith(("/", "~")):
        return path
    return base + path


def _crontab(words: Words) -> list[Target]:
    if "-l" in words.items[1:]:
        return []
    return [("(the user's crontab)", True)]


def _at(words: Words) -> list[Target]:
    return [("(a job for at to run later)", True)]


_SPECIAL = {
    "dd": _dd,
    "sed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "find": _find,
    "tar": _tar,
    "git": _git,
    "crontab": _crontab,
    "at": _at,
}
