"""The rules a permission prompt offers ("allow for this session", "always allow"): readable,
literal, and no broader than the user can see.

- A command gets one rule per simple command not already allowed. A program without
  subcommands is proposed whole (`echo one` -> `Bash(echo *)`); one with subcommands
  (`git`, `npm`, `cargo`, `uv`, `docker`, `kubectl`, ...: `SUBCOMMAND_PROGRAMS`) with its
  subcommand (`git status -s` -> `Bash(git status *)`), and a runner's target with it
  (`npm run test -- -k x` -> `Bash(npm run test *)`). A shell, an interpreter, a program that
  runs another (`sudo`, `env`, `xargs`), and a destructive or file-writing one (`rm`, `dd`, `cp`,
  `find`, `sed`: `EXACT_ONLY_PROGRAMS`) is proposed as the exact command and nothing broader: a
  rule `Bash(python *)` would allow any code at all. So is a subcommand program whose subcommand
  cannot be read (`git -C x status`). No rule is proposed when even the exact command cannot be
  written as one (a computed program name, a glob, a `*` in a word).
- "Always reject" refuses exactly what was shown: the whole command line
  (`propose_refusals`), never its program.
- A path is written literally: `Edit(./app.py)`, `Edit(src/app.py)`, `Write(//etc/hosts)`, with
  `*`, `?` and `\\` escaped (`agent.permissions.rules.escape_path_pattern`), so a file named `**`
  proposes `Edit(./\\*\\*)`, never `Edit(./**)`.
- A fetch proposes its exact host (`Fetch(domain:example.com)`), a skill or subagent its exact
  name (glob characters bracketed), an MCP tool its `mcp__<server>__<tool>` name as configured.
  A name the rule syntax cannot hold literally gets no proposal: the prompt still offers
  "allow once".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import assert_never

from agent.permissions.rules import (
    PATH_TOOLS,
    Rule,
    command_regex,
    escape_path_pattern,
    parse_rule,
    resolve_path,
    within,
)
from agent.shell import SHELLS, Segment, parse_command
from agent.tools import PermissionRequest

_PLAIN_WORD = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_RULE_TOOL = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_DOMAIN = re.compile(r"[a-z0-9._-]+|[0-9a-f:.]+")
_RUNNERS = frozenset({"run", "exec", "x", "run-script", "dlx"})
"""Subcommands that run a script or package named by the next word: it is part of the rule."""

SUBCOMMAND_PROGRAMS = frozenset(
    {"git", "npm", "pnpm", "yarn", "npx", "pnpx", "bunx", "uvx", "cargo", "rustup", "uv", "pip",
     "pip3", "pipx", "poetry", "pdm", "hatch", "pipenv", "conda", "mamba", "tox", "nox", "go",
     "docker", "podman", "kubectl", "helm", "gh", "glab", "terraform", "tofu", "make", "just",
     "gradle", "gradlew", "mvn", "mvnw", "dotnet", "swift", "flutter", "dart", "mix", "cabal",
     "stack", "bundle", "gem", "composer", "brew", "apt", "apt-get", "dnf", "yum", "pacman", "nix",
     "aws", "gcloud", "az", "nx", "turbo", "lerna", "pre-commit", "rake", "cmake", "bazel",
     "ctest"}
)  # fmt: skip
"""Programs whose first argument picks what they do: a rule names program and subcommand."""

EXACT_ONLY_PROGRAMS = frozenset(
    SHELLS
    | {"fish", "csh", "tcsh", "pwsh", "powershell", "cmd", "deno", "bun", "java", "jshell",
       "julia", "R", "Rscript", "scala", "groovy", "kotlin", "elixir", "erl", "iex", "escript",
       "ghci", "runghc", "runhaskell", "racket", "guile", "sbcl", "clojure", "swipl",
       "osascript", "awk", "gawk", "mawk", "nawk", "sed", "expect", "gdb", "lldb", "vim", "vi",
       "nvim", "emacs", "ed", "ex",
       "sudo", "doas", "su", "runuser", "pkexec", "env", "nohup", "nice", "ionice", "timeout",
       "stdbuf", "setsid", "exec", "command", "builtin", "xargs", "watch", "time", "chronic",
       "unbuffer", "flock", "strace", "ltrace", "chroot", "parallel", "eval", "source", ".",
       "trap", "alias", "hash", "script", "unshare", "nsenter", "systemd-run", "firejail",
       "bwrap", "faketime",
       "rm", "rmdir", "dd", "mkfs", "shred", "truncate", "wipefs", "fdisk", "parted", "mv", "cp",
       "ln", "install", "rsync", "tee", "tar", "unzip", "patch", "find", "chmod", "chown",
       "chgrp", "chattr", "setfacl", "kill", "pkill", "killall", "reboot", "shutdown", "halt",
       "poweroff", "systemctl", "service", "launchctl", "crontab", "at", "batch", "passwd",
       "useradd", "userdel", "usermod", "mount", "umount", "iptables",
       "curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "ftp"}
)  # fmt: skip
"""Programs never proposed more broadly than the exact command: shells and interpreters (any
code), programs that run another (any program), destructive or file-writing ones, and network
clients (an upload is a read of anything)."""

_INTERPRETER = re.compile(r"(?:python|pypy|ruby|perl|php|node|nodejs|lua|luajit|tclsh|wish)[0-9.]*")


def propose_rules(
    request: PermissionRequest, *, cwd: Path, allow: Sequence[Rule] = ()
) -> tuple[str, ...]:
    """Readable, literal rules that would admit `request` next time (see the module
    docstring). Empty when no honest rule exists."""
    if request.rule_tool == "Bash":
        return _propose_commands(request.command, allow, segment_rule)
    return _propose_other(request, cwd)


def propose_refusals(
    request: PermissionRequest, *, cwd: Path, allow: Sequence[Rule] = ()
) -> tuple[str, ...]:
    """The rules "always reject" adds, no broader than what the prompt showed: a command is
    refused as the exact command line (`ls && echo marker` -> `Bash(ls && echo marker)`, which
    a deny rule matches as a whole line: `agent.permissions.commands.command_matches`), never by
    its program (`Bash(ls *)` would refuse every `ls` in the project); a command a rule cannot
    spell exactly (a `*` in it) gets none. Other tools as `propose_rules`."""
    if request.rule_tool == "Bash":
        return _exact_line(request.command)
    return _propose_other(request, cwd)


def _exact_line(command: str | None) -> tuple[str, ...]:
    line = " ".join((command or "").split())
    if not line or "*" in line:
        return ()
    rule = f"Bash({line})"
    try:
        parsed = parse_rule(rule)
    except ValueError:
        return ()
    return (rule,) if parsed.pattern == line else ()


def _propose_other(request: PermissionRequest, cwd: Path) -> tuple[str, ...]:
    tool = request.rule_tool
    if tool in PATH_TOOLS:
        base = resolve_path(cwd, Path("/"))
        specs = [_path_spec(resolve_path(path, base), base) for path in request.paths]
        if not specs or any(spec is None for spec in specs):
            return ()
        return _unique(f"{tool}({spec})" for spec in specs)
    if tool == "Fetch":
        domain = (request.domain or "").lower().rstrip(".")
        return (f"Fetch(domain:{domain})",) if _DOMAIN.fullmatch(domain) else ()
    if tool.startswith("mcp__") or request.mcp_server is not None:
        return (tool,) if _RULE_TOOL.fullmatch(tool) and "*" not in tool else ()
    if request.specifier is not None:
        specifier = request.specifier
        if not specifier or specifier != specifier.strip():
            return ()
        literal = re.sub(r"([*?\[])", r"[\1]", specifier)
        return (f"{tool}({literal})",)
    return (tool,)


def _propose_commands(
    command: str | None, allow: Sequence[Rule], rule_for: Callable[[Segment], str | None]
) -> tuple[str, ...]:
    if command is None:
        return ()
    parsed = parse_command(command)
    if not parsed.parsed or parsed.opaque or not parsed.segments:
        return ()
    patterns = [command_regex(r.pattern) for r in allow if r.tool == "Bash" and r.pattern]
    proposals: list[str] = []
    for segment in parsed.segments:
        if any(regex.fullmatch(segment.text) for regex in patterns):
            continue
        rule = rule_for(segment)
        if rule is None:
            return ()
        proposals.append(rule)
    return _unique(proposals)


def segment_rule(segment: Segment) -> str | None:
    """The rule proposed for one simple command (see the module docstring)."""
    if segment.runs is not None:
        match segment.wrap:
            case "transparent":  # `timeout 30 npm test` is admitted by a rule for `npm test`
                return segment_rule(segment.runs)
            case "explicit":  # `sudo X`, `env A=1 X`: only a rule naming the whole command
                return _exact(segment)
            case "opaque" | None:  # `xargs X`: no rule can admit it
                return None
            case _:
                assert_never(segment.wrap)
    words = segment.words
    first = segment.assignments
    if first >= len(words) or segment.dynamic:
        return _exact(segment)
    program = words[first]
    name = program.rsplit("/", 1)[-1]
    head = list(words[: first + 1])
    if (
        name in EXACT_ONLY_PROGRAMS
        or _INTERPRETER.fullmatch(name)
        or not all(_PLAIN_WORD.fullmatch(word) for word in head)
    ):
        return _exact(segment)
    if name not in SUBCOMMAND_PROGRAMS:
        return f"Bash({' '.join(head)} *)"
    subcommand = _plain_argument(segment, first + 1)
    if subcommand is None:
        return _exact(segment)
    head.append(subcommand)
    if subcommand in _RUNNERS:
        target = _plain_argument(segment, first + 2)
        if target is None:
            return _exact(segment)
        head.append(target)
    return f"Bash({' '.join(head)} *)"


def _plain_argument(segment: Segment, index: int) -> str | None:
    if index >= len(segment.words) or segment.is_computed(index):
        return None
    word = segment.words[index]
    if word.startswith("-") or not _PLAIN_WORD.fullmatch(word):
        return None
    return word


def _exact(segment: Segment) -> str | None:
    """`Bash(<the command>)`, when a rule can say exactly that: no computed word, no `*` (a
    wildcard in a rule), and no whitespace inside a word (rules compare single spaces)."""
    text = segment.text
    if not text or "*" in text or any(segment.is_computed(i) for i in range(len(segment.words))):
        return None
    if text != " ".join(text.split()):
        return None
    return f"Bash({text})"


def _path_spec(path: Path, cwd: Path) -> str | None:
    if within(path, cwd) and path != cwd:
        relative = escape_path_pattern(path.relative_to(cwd).as_posix())
        spec = relative if "/" in relative else f"./{relative}"
    else:
        spec = "/" + escape_path_pattern(str(path))
    # A rule's pattern is stripped when parsed: a name with whitespace at either end of the
    # pattern cannot be written.
    return spec if spec == spec.strip() else None


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
