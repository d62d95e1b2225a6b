"""Permission rules: their syntax, and whether one matches a call.

This module only answers "does this rule match this call?"; which rule wins, and what the mode
adds, is the policy in `agent.permissions.policy`.

Rule syntax (Claude Code's): `Tool` or `Tool(pattern)`. A bare `Tool` (or `Tool(*)`) matches every
call of the tool, even a shell command that cannot be parsed.

- `Bash(npm run *)`: a glob over the command's words (`*` spans anything, including spaces); a
  trailing ` *` also matches the bare prefix (`npm run`). Claude's `Bash(npm run test:*)` means
  `Bash(npm run test *)`. A pattern must match EVERY simple command the string runs (see
  `agent.shell.parse`); different allow rules may cover different segments. A command that cannot
  be parsed, or that runs code the rule cannot see (`eval`, `python -c`, `xargs`, `find -exec`,
  `... | sh`, `git -c`, `source`, a quoted array subscript...), never matches a pattern allow
  rule. Deny and ask rules match when ANY command the string might run matches, also after
  unwrapping `sudo`, `env`, `xargs`, `timeout`, `find -exec`, `bash -lc`..., with the program's
  basename (`/bin/rm`) and with git's global options stripped (`git -C . push`). Deny cannot be
  escaped by syntax: `$'\x72m'` is `rm`; when the command is unparsable, or runs code in another
  language, a rule whose literal leading words appear as a token sequence in that code denies;
  and when a program name, or code it runs, is computed at run time (`$CMD`, `{r,m}`,
  `curl ... | sh`, `eval "$X"`), every pattern deny rule for Bash denies, because no one can say
  what runs. `agent.permissions.commands` has the details. Redirections and common writers
  (`cp`, `tee`, `sort -o`...) count as writes (step 4; `Edit`/`Write` deny rules apply).
- `Read(glob)`, `Edit(glob)`, `Write(glob)`: gitignore-like paths. `./x`, `x/y` and `/x` are
  relative to the cwd (the project root), `~/x` to the home directory, `//x` is the absolute `/x`.
  A pattern without a slash (`.env`, `*.pem`) matches that name in any directory. `*` stays within
  a path component, `**` spans components. A pattern matching a directory covers everything in
  it. Paths are resolved (`~`, `..`, symlinks) before matching, so `src/../secret` or a symlink in
  `src` pointing outside do not match `Edit(src/**)`; deny rules also match the unresolved
  spelling. `Edit(...)` rules cover `Write` calls too (as in Claude Code); `Write(...)` covers only
  `Write`. An allow rule must cover every path of a call; deny and ask rules match any. A
  backslash makes the next character literal: `Edit(./\\*\\*)` is the file named `**` (the
  rules "always allow" proposes are written so).
- `Fetch(domain:example.com)` matches that host only; `Fetch(domain:*.example.com)` matches its
  subdomains (not the apex). Subdomains are not implied: `github.io` is not `evil.github.io`.
- `mcp__server__tool`, `mcp__server` (every tool of the server) and `mcp__server__*`, with the
  server and tool names exactly as configured (`a_` is not `a`; a server named `a__b` is
  `mcp__a__b`); a rule with another `*` is a glob over `mcp__<server>__<tool>`.
- `Task(agent-type)`, `Skill(name)` and any other tool: a glob over the request's `specifier`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agent.files import FileId, PathChanged, identify
from agent.permissions import commands as permission_commands
from agent.permissions.commands import command_regex as command_regex  # re-exported
from agent.shell import ParsedCommand, Segment, parse_command
from agent.tools import PermissionRequest
from providers.records import Record

if TYPE_CHECKING:
    from agent.settings import Settings

_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.\-]*(?:\*)?)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_ALIASES = {"WebFetch": "Fetch", "MultiEdit": "Edit"}
PATH_TOOLS = frozenset({"Read", "Edit", "Write"})
_CASELESS = sys.platform in ("darwin", "win32")


class Rule(Record, kw_only=False):
    """`Tool` or `Tool(pattern)`; `source` is where it came from: user|project|local|session|cli."""

    tool: str
    pattern: str | None
    source: str
    file: str | None = field(default=None, compare=False)
    """The settings file the rule was read from (for the audit trail), when it came from one."""

    def __str__(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"


def parse_rule(text: str, source: str = "user") -> Rule:
    """Parse `Tool` or `Tool(pattern)`.

    Raises:
        ValueError: the text is not a rule, or its pattern is empty or malformed for its tool.
    """
    match = _RULE.match(text)
    if match is None:
        raise ValueError(f"not a permission rule: {text!r} (expected 'Tool' or 'Tool(pattern)')")
    tool, pattern = match.group(1), match.group(2)
    tool = _ALIASES.get(tool, tool)
    if pattern is not None:
        pattern = pattern.strip()
        if not pattern:
            raise ValueError(f"empty pattern in {text!r}: write {tool!r} to match every call")
        if pattern in ("*", "**"):
            pattern = None
    if pattern is not None and tool == "Fetch" and not pattern.startswith("domain:"):
        raise ValueError(f"{text!r}: Fetch patterns are written 'Fetch(domain:example.com)'")
    if pattern is not None and tool == "Fetch" and not pattern.removeprefix("domain:").strip():
        raise ValueError(f"{text!r}: empty domain")
    return Rule(tool=tool, pattern=pattern, source=source)


_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_NEXT_RULE = r"\s*,\s*(?=[A-Za-z_][A-Za-z0-9_.\-]*\*?\s*(?:\(|,|$))"
_RULE_BOUNDARY = re.compile(rf"(?<=\)){_NEXT_RULE}|(?<=[A-Za-z0-9_.\-*]){_NEXT_RULE}")


def parse_rule_list(text: str, source: str = "user") -> list[Rule]:
    """The rules in `text` as a prompt or a listing shows them: one rule, several joined by
    commas (`Bash(ls *), Bash(echo *)`, as an "always" option names them), or each in Markdown
    code spans (`` `Bash(ls *)` ``; anything around the spans is ignored, so a whole option
    label pasted back works). A comma splits only where a whole rule ends and another begins,
    and only if every piece is a rule: otherwise the text is one rule.

    Raises:
        ValueError: a piece is not a rule (`parse_rule`).
    """
    spans = [match.group(2).strip() for match in _CODE_SPAN.finditer(text)]
    rules: list[Rule] = []
    for piece in spans or [text.strip()]:
        parts = [part.strip() for part in _RULE_BOUNDARY.split(piece)]
        try:
            rules.extend(parse_rule(part, source) for part in parts)
        except ValueError:
            if len(parts) == 1:
                raise
            rules.append(parse_rule(piece, source))
    return rules


class PermissionRules(Record, kw_only=False):
    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> PermissionRules:
        """All scopes' rules, concatenated (a scope never shadows another's deny rule).

        Raises:
            ValueError: a rule is malformed (naming its file); a broken deny rule is never
                silently dropped.
        """
        lists: dict[str, list[Rule]] = {"allow": [], "ask": [], "deny": []}
        for entry in settings.permission_rules:
            try:
                rule = replace(parse_rule(entry.rule, entry.scope), file=str(entry.source))
                lists[entry.list_name].append(rule)
            except ValueError as error:
                raise ValueError(
                    f"{entry.source}: permissions.{entry.list_name}: {error}"
                ) from None
        return cls(allow=tuple(lists["allow"]), ask=tuple(lists["ask"]), deny=tuple(lists["deny"]))

    @classmethod
    def parse(
        cls,
        *,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        source: str = "user",
    ) -> PermissionRules:
        """Rules from strings (tests, `--allow` style CLI flags)."""
        return cls(
            allow=tuple(parse_rule(text, source) for text in allow),
            ask=tuple(parse_rule(text, source) for text in ask),
            deny=tuple(parse_rule(text, source) for text in deny),
        )


class Subject(Record, kw_only=False):
    """A request as rules see it: its paths resolved against the cwd, its command parsed."""

    request: PermissionRequest
    cwd: Path
    paths: tuple[Path, ...]
    """Resolved."""
    lexical: tuple[Path, ...]
    """Normalised without following symlinks (deny rules match these too)."""
    command: ParsedCommand | None
    writes: tuple[Path, ...]
    """Resolved paths the call writes: its paths, plus files its redirections write."""
    unknown_writes: tuple[str, ...]
    """Write targets computed at run time (`> $HOME/x`, `> ~+/x`, `cd .. && cp a b`)."""
    files: tuple[FileId | None, ...] = ()
    """For a path tool (`Read`, `Edit`, `Write`): what is at each of `paths` (the caller's open
    file when the request carries one, else an `lstat` now; None: nothing)."""

    @classmethod
    def of(cls, request: PermissionRequest, cwd: Path) -> Subject:
        paths = tuple(resolve_path(path, cwd) for path in request.paths)
        lexical = tuple(lexical_path(path, cwd) for path in request.paths)
        files: tuple[FileId | None, ...] = ()
        if request.rule_tool in PATH_TOOLS:
            given = request.files
            files = tuple(
                given[index] if index < len(given) else identify(path)
                for index, path in enumerate(paths)
            )
        command = parse_command(request.command) if request.command is not None else None
        writes = list(paths)
        unknown: list[str] = []
        if command is not None:
            unknown.extend(command.computed_writes)
            for target in command.writes:
                if "$" in target or "`" in target:
                    unknown.append(target)
                else:
                    writes.append(resolve_path(target, cwd))
        return cls(request, cwd, paths, lexical, command, tuple(writes), tuple(unknown), files)


def within(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or inside it (both already resolved)."""
    return path == root or root in path.parents


# ------------------------------------------------------------------------------- matching


def tool_matches(rule_tool: str, request_tool: str) -> bool:
    """Whether a rule for `rule_tool` covers a call of `request_tool` (`Edit` covers `Write`;
    `mcp__server` and `mcp__server__*` cover the server's tools)."""
    if rule_tool == request_tool:
        return True
    if rule_tool == "Edit" and request_tool == "Write":
        return True
    if rule_tool.startswith("mcp__"):
        if "*" in rule_tool:
            return fnmatch.fnmatchcase(request_tool, rule_tool)
        if rule_tool.count("__") == 1:
            return request_tool.startswith(rule_tool + "__")
    return False


def mcp_rule_matches(rule_tool: str, server: str, full_name: str) -> bool:
    """Whether an `mcp__...` rule covers the tool `full_name` (`mcp__<server>__<tool>`, names as
    configured) of the server named `server`: the rule names the server, the tool, or is a glob
    (`mcp__server__*`, `mcp__*`). Compared with the configured names, never a rewritten one."""
    if not rule_tool.startswith("mcp__"):
        return False
    server_rule = f"mcp__{server}"
    if rule_tool in (server_rule, full_name):
        return True
    if rule_tool.endswith("__*") and rule_tool[5:-3] and "*" not in rule_tool[:-1]:
        return rule_tool[:-3] == server_rule  # every tool of that one server
    return "*" in rule_tool and fnmatch.fnmatchcase(full_name, rule_tool)


def rule_matches(
    rule: Rule, subject: Subject, *, quantifier: Literal["any", "all"], deny: bool
) -> bool:
    """Whether `rule` matches the call: for `all` every path (or command segment) must match,
    for `any` one suffices (commands also unwrapped); `deny` also tries the unresolved paths and
    the files the command's redirections write."""
    request = subject.request
    if request.mcp_server is not None:
        return rule.pattern is None and mcp_rule_matches(
            rule.tool, request.mcp_server, request.rule_tool
        )
    if not tool_matches(rule.tool, request.rule_tool):
        # Edit/Write deny rules also guard the files a shell redirection writes
        if deny and rule.tool in ("Edit", "Write") and rule.pattern and subject.command:
            return any(_path_matches(rule.pattern, path, subject.cwd) for path in subject.writes)
        return False
    if rule.pattern is None:
        return True
    if rule.tool == "Bash":
        return _command_matches(rule.pattern, subject.command, quantifier=quantifier, deny=deny)
    if rule.tool in PATH_TOOLS:
        candidates = subject.paths + subject.lexical if deny else subject.paths
        if not subject.paths:
            return False
        if quantifier == "all":
            return all(_path_matches(rule.pattern, path, subject.cwd) for path in subject.paths)
        return any(_path_matches(rule.pattern, path, subject.cwd) for path in candidates)
    if rule.tool == "Fetch":
        return request.domain is not None and _domain_matches(rule.pattern, request.domain)
    return request.specifier is not None and fnmatch.fnmatchcase(request.specifier, rule.pattern)


def _command_matches(
    pattern: str, command: ParsedCommand | None, *, quantifier: Literal["any", "all"], deny: bool
) -> bool:
    # deny and ask rules match the same: any command the line might run
    if command is None:
        return False
    if quantifier == "all":
        return permission_commands.command_allowed(command, [pattern]) is not None
    return permission_commands.command_matches(pattern, command)


def allowed_by(rules: Sequence[Rule], subject: Subject) -> Rule | None:
    """The (first) allow rule that admits the call; for a command, every segment must be covered
    by some rule (see `agent.permissions.commands`)."""
    for rule in rules:
        if rule.tool == "Bash" and rule.pattern is not None:
            continue
        if rule_matches(rule, subject, quantifier="all", deny=False):
            return rule
    command = subject.command
    if subject.request.rule_tool != "Bash" or command is None:
        return None
    patterned = [rule for rule in rules if rule.tool == "Bash" and rule.pattern is not None]
    index = permission_commands.command_allowed(command, [r.pattern or "" for r in patterned])
    return None if index is None else patterned[index]


def dynamic_programs(segment: Segment) -> bool:
    """Whether the program a segment (or a wrapper in it: `sudo $X`, `timeout 5 $X`) runs is
    computed at run time."""
    return permission_commands.dynamic_programs(segment)


def bash_token_fallback(rules: Sequence[Rule], subject: Subject) -> Rule | None:
    """For what the parser cannot read (a command it cannot parse, code in another language,
    code that is not in the command line): a rule that could match it."""
    command = subject.command
    if command is None or subject.request.rule_tool != "Bash":
        return None
    patterned = [rule for rule in rules if rule.tool == "Bash" and rule.pattern is not None]
    index = permission_commands.fallback_match([r.pattern or "" for r in patterned], command)
    return None if index is None else patterned[index]


def _domain_matches(pattern: str, domain: str) -> bool:
    want = pattern.removeprefix("domain:").strip().lower().rstrip(".")
    host = domain.strip().lower().rstrip(".")
    if want.startswith("*."):
        return host.endswith(want[1:]) and len(host) > len(want) - 1
    return host == want


# ---------------------------------------------------------------------------------- paths


def resolve_path(path: Path | str, cwd: Path) -> Path:
    """Absolute, `~` expanded, `..` and symlinks resolved, leading `//` collapsed."""
    absolute = _absolute(path, cwd)
    for _ in range(3):
        try:
            return Path(_collapse(os.path.realpath(absolute)))
        except OSError:
            # A link that vanished while it was being resolved (something swapping it):
            # resolve again; what is decided is then opened exactly (`agent.files.safe_paths`).
            continue
    raise PathChanged(absolute, "it keeps changing while it is being resolved")


def lexical_path(path: Path | str, cwd: Path) -> Path:
    """Absolute and normalised without touching the file system (symlinks kept)."""
    return Path(_collapse(os.path.normpath(_absolute(path, cwd))))


def _absolute(path: Path | str, cwd: Path) -> str:
    text = os.path.expanduser(str(path))
    return text if os.path.isabs(text) else os.path.join(str(cwd), text)


def _collapse(text: str) -> str:
    return "/" + text.lstrip("/") if text.startswith("//") else text


def _path_matches(pattern: str, path: Path, cwd: Path) -> bool:
    compiled = _path_regexes(pattern, str(cwd))
    candidates = [path, *path.parents]
    if compiled.name_glob is not None:
        return any(compiled.name_glob.fullmatch(candidate.name) for candidate in candidates)
    return any(
        regex.fullmatch(str(candidate)) for regex in compiled.anchored for candidate in candidates
    )


def names_place(pattern: str, place: Path, cwd: Path) -> bool:
    """Whether a path pattern names `place` (resolved) itself rather than merely covering it:
    its literal part, up to the first wildcard, is `place` or inside it (`~/.ssh/**` and
    `~/.ssh/config` name `~/.ssh`; `~/**` does not), or it is a name without wildcards
    (`.env`, `id_rsa`). Secrets need such a rule (`agent.permissions.policy`)."""
    compiled = _path_regexes(pattern, str(cwd))
    if compiled.name_glob is not None:
        return compiled.literal
    return any(within(base, place) for base in compiled.bases)


def literal_places(pattern: str, cwd: Path) -> tuple[Path, ...]:
    """The places an anchored path pattern names literally (its part before the first
    wildcard, resolved and as written): `./secrets/**` -> the `secrets` directory. None for a
    name pattern (`.env`: any directory)."""
    return _path_regexes(pattern, str(cwd)).bases


class _PathPattern(Record, kw_only=False):
    name_glob: re.Pattern[str] | None
    anchored: tuple[re.Pattern[str], ...]
    bases: tuple[Path, ...] = ()
    """The literal part of an anchored pattern, resolved and as written."""
    literal: bool = False
    """A name pattern without wildcards."""


@lru_cache(maxsize=1024)
def _path_regexes(pattern: str, cwd: str) -> _PathPattern:
    flags = re.IGNORECASE if _CASELESS else 0
    text = pattern.rstrip("/") or "/"
    if "/" not in text and not text.startswith("~"):
        literal = not _has_wildcard(text)
        return _PathPattern(re.compile(_glob_regex(text), flags), (), literal=literal)
    if text.startswith("//"):
        absolute = "/" + text.lstrip("/")
    elif text == "~" or text.startswith("~/"):
        absolute = os.path.expanduser("~") + text[1:]
    else:
        absolute = os.path.join(cwd, text.lstrip("/"))
    parts = absolute.split("/")
    literal = 0
    while literal < len(parts) and not _has_wildcard(parts[literal]):
        literal += 1
    prefix = "/".join(_unescape(part) for part in parts[:literal]) or "/"
    rest = "/".join(parts[literal:])
    regexes: list[re.Pattern[str]] = []
    bases = (resolve_path(prefix, Path("/")), lexical_path(prefix, Path("/")))
    for base in set(bases):
        head = re.escape(str(base).rstrip("/"))
        regex = head if not rest else head + "/" + _glob_regex(rest)
        regexes.append(re.compile(regex, flags))
    return _PathPattern(None, tuple(regexes), bases=bases)


def _has_wildcard(part: str) -> bool:
    """Whether a pattern part has an unescaped `*` or `?`."""
    index = 0
    while index < len(part):
        if part[index] == "\\":
            index += 2
            continue
        if part[index] in "*?":
            return True
        index += 1
    return False


def _unescape(part: str) -> str:
    return re.sub(r"\\(.)", r"\1", part, flags=re.DOTALL)


def escape_path_pattern(text: str) -> str:
    """`text` as a literal path pattern: `*`, `?` and `\\` escaped with a backslash, so a file
    named `**` is `\\*\\*` and matches only itself."""
    return re.sub(r"([*?\\])", r"\\\1", text)


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(glob):
        if glob[index] == "\\" and index + 1 < len(glob):
            out.append(re.escape(glob[index + 1]))
            index += 2
        elif glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    return "".join(out)
