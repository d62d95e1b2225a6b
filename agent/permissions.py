"""Permission rules, the pure `decide`, and the gate that asks the user.

`decide` is pure (rules and a request in, a decision out; it only reads the file system to
resolve symlinks) and its ORDER IS THE POLICY, deliberately not "most specific wins":

1. a matching deny rule refuses, whatever the mode or allow rules;
2. read-only tools never prompt;
3. `plan` refuses every mutating tool;
4. a write outside the workspace roots, or outside the declared scope, prompts in every mode but
   `yolo`;
5. `yolo` allows;
6. a matching ask rule prompts, even where an allow rule matches;
7. a matching allow rule allows;
8. otherwise the mode decides: `ask` prompts, `accept-edits` allows file edits (inside the roots,
   which step 4 has established) and prompts the rest, `auto` allows.

Rule syntax (Claude Code's): `Tool` or `Tool(pattern)`. A bare `Tool` (or `Tool(*)`) matches every
call of the tool, even a shell command that cannot be parsed.

- `Bash(npm run *)`: a glob over the command's words (`*` spans anything, including spaces); a
  trailing ` *` also matches the bare prefix (`npm run`). Claude's `Bash(npm run test:*)` means
  `Bash(npm run test *)`. A pattern must match EVERY simple command the string runs (see
  `agent.shell_parse`); different allow rules may cover different segments. A command that cannot
  be parsed never matches a pattern allow rule. Deny and ask rules match when ANY segment matches,
  also after unwrapping `sudo`, `env`, `xargs`, `timeout`, `find -exec`... and with the program's
  basename (`/bin/rm`). Deny cannot be escaped by syntax: when the command is unparsable, or runs
  code the parser cannot see (`... | bash`, `eval "$X"`), a deny rule whose literal leading words
  appear as a token sequence anywhere in the command denies; and when a segment's program name is
  computed at run time (`$CMD`, `{r,m}`), every pattern deny rule for Bash denies, because no one
  can say which program runs. Interpreters are out of reach: `python -c "..."` is `python`.
  Redirections that write files count as writes (step 4; `Edit`/`Write` deny rules apply).
- `Read(glob)`, `Edit(glob)`, `Write(glob)`: gitignore-like paths. `./x`, `x/y` and `/x` are
  relative to the cwd (the project root), `~/x` to the home directory, `//x` is the absolute `/x`.
  A pattern without a slash (`.env`, `*.pem`) matches that name in any directory. `*` stays within
  a path component, `**` spans components. A pattern matching a directory covers everything in
  it. Paths are resolved (`~`, `..`, symlinks) before matching, so `src/../secret` or a symlink in
  `src` pointing outside do not match `Edit(src/**)`; deny rules also match the unresolved
  spelling. `Edit(...)` rules cover `Write` calls too (as in Claude Code); `Write(...)` covers only
  `Write`. An allow rule must cover every path of a call; deny and ask rules match any.
- `Fetch(domain:example.com)` matches that host only; `Fetch(domain:*.example.com)` matches its
  subdomains (not the apex). Subdomains are not implied: `github.io` is not `evil.github.io`.
- `mcp__server__tool`, `mcp__server` (every tool of the server) and `mcp__server__*`.
- `Task(agent-type)`, `Skill(name)` and any other tool: a glob over the request's `specifier`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias, assert_never

from agent.backends import (
    Interaction,
    Mode,
    PermissionOption,
    PermissionOptionKind,
    PermissionPrompt,
    ToolUi,
)
from agent.shell_parse import ParsedCommand, Segment, parse_command, tokens
from agent.tools.base import PermissionRequest, ScopeContract

if TYPE_CHECKING:
    from agent.settings import Settings

Outcome: TypeAlias = Literal["allow", "deny", "ask"]

_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.\-]*(?:\*)?)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_ALIASES = {"WebFetch": "Fetch", "MultiEdit": "Edit"}
_PATH_TOOLS = frozenset({"Read", "Edit", "Write"})
# programs that run their arguments as a command
_WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nohup", "nice", "ionice", "timeout", "stdbuf", "setsid", "exec",
     "command", "builtin", "xargs", "watch", "time", "chronic", "unbuffer", "flock", "strace",
     "chroot", "runuser", "su", "parallel"}
)  # fmt: skip
_EXEC_FLAGS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_DURATION = re.compile(r"[0-9.]+[smhd]?")
_CASELESS = sys.platform in ("darwin", "win32")
_RG_GLOB_SPECIAL = frozenset("[]{},!\\")


@dataclass(frozen=True)
class Rule:
    """`Tool` or `Tool(pattern)`; `source` is where it came from: user|project|local|session|cli."""

    tool: str
    pattern: str | None
    source: str

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


@dataclass(frozen=True)
class PermissionRules:
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
                lists[entry.list_name].append(parse_rule(entry.rule, entry.scope))
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


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    step: int
    """Which of the eight steps decided (see the module docstring)."""
    rule: Rule | None
    reason: str


# -------------------------------------------------------------------------------- decide


def decide(
    rules: PermissionRules,
    mode: Mode,
    request: PermissionRequest,
    *,
    read_only: bool,
    roots: Sequence[Path],
    scope: ScopeContract | None = None,
    cwd: Path | None = None,
) -> Decision:
    """Decide one call. `cwd` (relative rule patterns, relative redirections) defaults to the
    first root."""
    base = resolve_path(cwd or (roots[0] if roots else Path.cwd()), Path("/"))
    subject = _Subject.of(request, base)

    for rule in rules.deny:
        if _matches(rule, subject, quantifier="any", deny=True):
            return Decision("deny", 1, rule, f"denied by rule {rule}")
    denied = _bash_deny_fallback(rules.deny, subject)
    if denied is not None:
        return denied

    if read_only:
        return Decision("allow", 2, None, "read-only")
    if mode == "plan":
        return Decision("deny", 3, None, "plan mode: nothing may be changed")

    if mode != "yolo":
        outside = _outside(subject.writes, roots, scope)
        if outside is None and subject.unknown_writes:
            outside = f"writes to a path computed at run time: {subject.unknown_writes[0]}"
        if outside is not None:
            return Decision("ask", 4, None, outside)
    if mode == "yolo":
        return Decision("allow", 5, None, "yolo mode")

    for rule in rules.ask:
        if _matches(rule, subject, quantifier="any", deny=False):
            return Decision("ask", 6, rule, f"ask rule {rule}")
    asked = _bash_token_fallback(rules.ask, subject)
    if asked is not None:
        return Decision("ask", 6, asked, f"ask rule {asked} (command not fully readable)")

    allowed = _allowed_by(rules.allow, subject)
    if allowed is not None:
        return Decision("allow", 7, allowed, f"allowed by rule {allowed}")

    match mode:
        case "ask":
            return Decision("ask", 8, None, "ask mode")
        case "accept-edits":
            if request.is_file_edit:
                return Decision("allow", 8, None, "accept-edits mode: a file edit in the workspace")
            return Decision("ask", 8, None, "accept-edits mode: not a file edit")
        case "auto":
            return Decision("allow", 8, None, "auto mode")
        case _:
            assert_never(mode)


@dataclass(frozen=True)
class _Subject:
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
    """Redirection targets computed at run time (`> $HOME/x`)."""

    @classmethod
    def of(cls, request: PermissionRequest, cwd: Path) -> _Subject:
        paths = tuple(resolve_path(path, cwd) for path in request.paths)
        lexical = tuple(lexical_path(path, cwd) for path in request.paths)
        command = parse_command(request.command) if request.command is not None else None
        writes = list(paths)
        unknown: list[str] = []
        if command is not None:
            for target in command.writes:
                if "$" in target or "`" in target:
                    unknown.append(target)
                else:
                    writes.append(resolve_path(target, cwd))
        return cls(request, cwd, paths, lexical, command, tuple(writes), tuple(unknown))


def _outside(
    writes: Sequence[Path], roots: Sequence[Path], scope: ScopeContract | None
) -> str | None:
    resolved_roots = [resolve_path(root, Path("/")) for root in roots]
    for path in writes:
        if not any(_within(path, root) for root in resolved_roots):
            return f"writes outside the workspace: {path}"
    if scope is not None and scope.declared:
        declared = [resolve_path(entry, Path("/")) for entry in scope.declared]
        for path in writes:
            if not any(_within(path, entry) for entry in declared):
                return f"out of scope: {path} is not in the declared scope"
    return None


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


# ------------------------------------------------------------------------------- matching


def _tool_matches(rule_tool: str, request_tool: str) -> bool:
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


def _matches(
    rule: Rule, subject: _Subject, *, quantifier: Literal["any", "all"], deny: bool
) -> bool:
    request = subject.request
    if not _tool_matches(rule.tool, request.rule_tool):
        # Edit/Write deny rules also guard the files a shell redirection writes
        if deny and rule.tool in ("Edit", "Write") and rule.pattern and subject.command:
            return any(_path_matches(rule.pattern, path, subject.cwd) for path in subject.writes)
        return False
    if rule.pattern is None:
        return True
    if rule.tool == "Bash":
        return _command_matches(rule.pattern, subject.command, quantifier=quantifier, deny=deny)
    if rule.tool in _PATH_TOOLS:
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
    if command is None or not command.parsed or not command.segments:
        return False
    regex = command_regex(pattern)
    if quantifier == "all":
        return all(regex.fullmatch(segment.text) for segment in command.segments)
    for segment in command.segments:
        texts = _deny_texts(segment) if deny else _ask_texts(segment)
        if any(regex.fullmatch(text) for text in texts):
            return True
    return False


def _allowed_by(rules: Sequence[Rule], subject: _Subject) -> Rule | None:
    """The (first) allow rule that admits the call; for a command, every segment must be matched
    by some rule."""
    for rule in rules:
        if rule.tool == "Bash" and rule.pattern is not None:
            continue
        if _matches(rule, subject, quantifier="all", deny=False):
            return rule
    command = subject.command
    if subject.request.rule_tool != "Bash" or command is None or not command.parsed:
        return None
    patterns = [rule for rule in rules if rule.tool == "Bash" and rule.pattern is not None]
    if not command.segments or not patterns:
        return None
    first: Rule | None = None
    for segment in command.segments:
        rule = next(
            (r for r in patterns if command_regex(r.pattern or "").fullmatch(segment.text)), None
        )
        if rule is None:
            return None
        first = first or rule
    return first


def _ask_texts(segment: Segment) -> list[str]:
    return _deny_texts(segment)


def _deny_texts(segment: Segment) -> list[str]:
    texts = [segment.text]
    texts.extend(_unwrapped(segment.command_words, depth=0))
    return texts


def _unwrapped(words: Sequence[str], *, depth: int) -> list[str]:
    """The command read as written, with the program's basename, and every command a wrapper
    (`sudo`, `env`, `xargs`, `find -exec`...) may run from its arguments."""
    if not words or depth > 4:
        return []
    texts = [" ".join(words)]
    name = words[0].rsplit("/", 1)[-1]
    if name != words[0]:
        texts.append(" ".join((name, *words[1:])))
    if name in _WRAPPERS:
        # which argument starts the wrapped command depends on each wrapper's options; any
        # suffix might, and deny errs towards matching
        for start in range(1, len(words)):
            if "=" in words[start] and name == "env":
                continue
            texts.extend(_unwrapped(words[start:], depth=depth + 1))
    elif name == "find":
        for index, word in enumerate(words):
            if word in _EXEC_FLAGS:
                texts.extend(_unwrapped(words[index + 1 :], depth=depth + 1))
    return texts


def _dynamic_programs(segment: Segment) -> bool:
    """Whether the program a segment (or a wrapper in it: `sudo $X`, `timeout 5 $X`) runs is
    computed at run time."""
    if segment.dynamic:
        return True
    words = segment.command_words
    if not words or words[0].rsplit("/", 1)[-1] not in _WRAPPERS:
        return False
    for index in range(1, len(words)):
        if segment.is_computed(segment.assignments + index):
            return True
        word = words[index]
        if word.startswith("-") or "=" in word or _DURATION.fullmatch(word):
            continue
        if word.rsplit("/", 1)[-1] not in _WRAPPERS:
            return False
    return False


def _bash_deny_fallback(deny: Sequence[Rule], subject: _Subject) -> Decision | None:
    command = subject.command
    if command is None or subject.request.rule_tool != "Bash":
        return None
    patterned = [rule for rule in deny if rule.tool == "Bash" and rule.pattern is not None]
    if not patterned:
        return None
    if command.parsed:
        for segment in command.segments:
            if _dynamic_programs(segment):
                rule = patterned[0]
                return Decision(
                    "deny",
                    1,
                    rule,
                    f"the program `{segment.text}` runs is computed at run time, so deny rule "
                    f"{rule} cannot be checked; spell the command out",
                )
    rule = _bash_token_fallback(patterned, subject)
    if rule is not None:
        return Decision("deny", 1, rule, f"denied by rule {rule} (command not fully readable)")
    return None


def _bash_token_fallback(rules: Sequence[Rule], subject: _Subject) -> Rule | None:
    """For a command that could not be parsed, or that runs code the parser cannot see: a rule
    whose literal leading words appear as a token sequence anywhere in it."""
    command = subject.command
    if command is None or subject.request.rule_tool != "Bash":
        return None
    if command.parsed and not command.opaque:
        return None
    found = tokens(command.source)
    names = [token.rsplit("/", 1)[-1] for token in found]
    for rule in rules:
        if rule.tool != "Bash" or rule.pattern is None:
            continue
        literal = _literal_words(rule.pattern)
        if not literal:
            return rule
        size = len(literal)
        for start in range(len(found) - size + 1):
            window = found[start : start + size]
            if list(window) == literal or [names[start], *window[1:]] == literal:
                return rule
    return None


def _literal_words(pattern: str) -> list[str]:
    words: list[str] = []
    for word in _normalise_command_pattern(pattern).split(" "):
        if any(ch in word for ch in "*?"):
            break
        words.append(word)
    return words


def _normalise_command_pattern(pattern: str) -> str:
    pattern = " ".join(pattern.split())
    if pattern.endswith(":*"):
        pattern = pattern[:-2].rstrip() + " *"
    return pattern


@lru_cache(maxsize=1024)
def command_regex(pattern: str) -> re.Pattern[str]:
    """A command pattern as a regex over a segment's text."""
    pattern = _normalise_command_pattern(pattern)
    optional_tail = pattern.endswith(" *")
    body = pattern[:-2] if optional_tail else pattern
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    if optional_tail:
        regex += r"(?: .*)?"
    return re.compile(regex, re.DOTALL)


def _domain_matches(pattern: str, domain: str) -> bool:
    want = pattern.removeprefix("domain:").strip().lower().rstrip(".")
    host = domain.strip().lower().rstrip(".")
    if want.startswith("*."):
        return host.endswith(want[1:]) and len(host) > len(want) - 1
    return host == want


# ---------------------------------------------------------------------------------- paths


def resolve_path(path: Path | str, cwd: Path) -> Path:
    """Absolute, `~` expanded, `..` and symlinks resolved, leading `//` collapsed."""
    return Path(_collapse(os.path.realpath(_absolute(path, cwd))))


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


@dataclass(frozen=True)
class _PathPattern:
    name_glob: re.Pattern[str] | None
    anchored: tuple[re.Pattern[str], ...]


@lru_cache(maxsize=1024)
def _path_regexes(pattern: str, cwd: str) -> _PathPattern:
    flags = re.IGNORECASE if _CASELESS else 0
    text = pattern.rstrip("/") or "/"
    if "/" not in text and not text.startswith("~"):
        return _PathPattern(re.compile(_glob_regex(text), flags), ())
    if text.startswith("//"):
        absolute = "/" + text.lstrip("/")
    elif text == "~" or text.startswith("~/"):
        absolute = os.path.expanduser("~") + text[1:]
    else:
        absolute = os.path.join(cwd, text.lstrip("/"))
    parts = absolute.split("/")
    literal = 0
    while literal < len(parts) and not any(ch in parts[literal] for ch in "*?"):
        literal += 1
    prefix = "/".join(parts[:literal]) or "/"
    rest = "/".join(parts[literal:])
    regexes: list[re.Pattern[str]] = []
    for base in {resolve_path(prefix, Path("/")), lexical_path(prefix, Path("/"))}:
        head = re.escape(str(base).rstrip("/"))
        regex = head if not rest else head + "/" + _glob_regex(rest)
        regexes.append(re.compile(regex, flags))
    return _PathPattern(None, tuple(regexes))


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
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


# ----------------------------------------------------------------------------------- gate


@dataclass(frozen=True)
class GateOutcome:
    allowed: bool
    cancelled: bool
    source: str
    """Who decided: a rule's source (`user`, `project`, `local`, `session`, `cli`), `mode`,
    `policy` (read-only, plan, outside the roots), or `prompt` (the user's answer)."""
    answer: PermissionOptionKind | None
    """The option the user chose; None when nobody was asked."""
    reason: str


PersistRule: TypeAlias = Callable[[str, str], None]
"""`persist_rule(list_name, rule)`, e.g. `agent.settings.append_local_rule` bound to the cwd."""

_GRANTABLE_STEPS = frozenset({8})
"""Only a prompt from the mode (step 8) can be answered by a rule: a session or "always" grant
cannot lift an ask rule (6) or an out-of-roots write (4), so offering one would mislead."""


class PermissionGate:
    """Applies `decide` to each call and asks the user when it says "ask".

    The only way to add a rule is a user's answer to a prompt: there is deliberately no method to
    grant a permission, so nothing that runs someone else's code (MCP servers, skills, hooks,
    subagents) can. Session grants live in memory only and are not restored on resume; "always"
    answers go through `persist_rule` (the local settings file).
    """

    def __init__(
        self,
        rules: PermissionRules,
        *,
        cwd: Path,
        roots: Sequence[Path],
        persist_rule: PersistRule | None = None,
    ) -> None:
        self._rules = rules
        self._cwd = resolve_path(cwd, Path("/"))
        self._roots = tuple(resolve_path(root, Path("/")) for root in roots) or (self._cwd,)
        self._persist_rule = persist_rule
        self._granted: list[Rule] = []
        self._refused: list[Rule] = []

    def _effective_rules(self) -> PermissionRules:
        return replace(
            self._rules,
            allow=self._rules.allow + tuple(self._granted),
            deny=self._rules.deny + tuple(self._refused),
        )

    def _read_deny_rules(self) -> tuple[Rule, ...]:
        return tuple(
            rule for rule in (*self._rules.deny, *self._refused) if _tool_matches(rule.tool, "Read")
        )

    def read_denied(self, path: Path) -> bool:
        """Whether a deny rule refuses reading `path` (step 1 of `decide` for a `Read` of it).
        Search tools (grep, glob, ls) leave such paths out of their results: the gate only sees
        the directory they search."""
        deny = self._read_deny_rules()
        if not deny:
            return False
        request = PermissionRequest(rule_tool="Read", description="", paths=(path,))
        rules = PermissionRules(deny=deny)
        decision = decide(rules, "ask", request, read_only=True, roots=self._roots, cwd=self._cwd)
        return decision.outcome == "deny"

    def read_deny_globs(self) -> tuple[str, ...]:
        """The `Read` deny patterns that are plain name globs (`.env`, `*.pem`: a name in any
        directory), as ripgrep can skip them itself (`--glob=!<glob>`). Only a speed-up:
        results are still filtered with `read_denied`."""
        globs: list[str] = []
        for rule in self._read_deny_rules():
            pattern = rule.pattern
            if pattern is None or pattern.startswith("~") or "/" in pattern.rstrip("/"):
                continue
            if any(char in pattern for char in _RG_GLOB_SPECIAL):
                continue  # literal in a rule, special to ripgrep
            globs.append(pattern.rstrip("/"))
        return _unique(globs)

    async def check(
        self,
        *,
        call_id: str,
        tool_name: str,
        request: PermissionRequest,
        read_only: bool,
        ui: ToolUi,
        raw_input: object,
        mode: Mode,
        interaction: Interaction,
        scope: ScopeContract,
    ) -> GateOutcome:
        """Decide the call, asking the user through `interaction` if the policy says so."""
        rules = self._effective_rules()
        decision = decide(
            rules, mode, request, read_only=read_only, roots=self._roots, scope=scope, cwd=self._cwd
        )
        source = _decision_source(decision)
        match decision.outcome:
            case "allow":
                return GateOutcome(True, False, source, None, decision.reason)
            case "deny":
                return GateOutcome(False, False, source, None, decision.reason)
            case "ask":
                pass
            case _:
                assert_never(decision.outcome)

        proposals = (
            propose_rules(request, cwd=self._cwd, allow=rules.allow)
            if decision.step in _GRANTABLE_STEPS
            else ()
        )
        refusals = propose_rules(request, cwd=self._cwd, allow=rules.allow)
        options = _options(proposals, refusals)
        prompt = PermissionPrompt(
            call_id=call_id,
            tool_name=tool_name,
            ui=ui,
            raw_input=raw_input,
            reason=decision.reason,
            options=options,
        )
        answer = await interaction.request_permission(prompt)
        if answer.option_id is None:
            return GateOutcome(False, True, "prompt", None, "the user cancelled")
        chosen = next((option for option in options if option.id == answer.option_id), None)
        if chosen is None:
            return GateOutcome(False, False, "prompt", None, f"unknown answer {answer.option_id!r}")
        return self._apply(chosen, proposals, refusals)

    def _apply(
        self, chosen: PermissionOption, proposals: tuple[str, ...], refusals: tuple[str, ...]
    ) -> GateOutcome:
        kind = chosen.kind
        match kind:
            case "allow_once":
                return GateOutcome(True, False, "prompt", kind, "allowed once by the user")
            case "allow_session":
                self._granted.extend(parse_rule(text, "session") for text in proposals)
                return GateOutcome(True, False, "prompt", kind, "allowed for this session")
            case "allow_always":
                self._granted.extend(parse_rule(text, "local") for text in proposals)
                note = self._persist("allow", proposals)
                return GateOutcome(True, False, "prompt", kind, "always allowed" + note)
            case "reject_once":
                return GateOutcome(False, False, "prompt", kind, "rejected by the user")
            case "reject_always":
                self._refused.extend(parse_rule(text, "local") for text in refusals)
                note = self._persist("deny", refusals)
                return GateOutcome(False, False, "prompt", kind, "always rejected" + note)
            case _:
                assert_never(kind)

    def _persist(self, list_name: str, rules: tuple[str, ...]) -> str:
        if self._persist_rule is None:
            return " (this session only: nowhere to save the rule)"
        try:
            for rule in rules:
                self._persist_rule(list_name, rule)
        except Exception as error:  # a settings write failing must not lose the user's answer
            return f" (this session only: saving the rule failed: {error})"
        return ""


def _decision_source(decision: Decision) -> str:
    if decision.rule is not None:
        return decision.rule.source
    return "mode" if decision.step in (5, 8) else "policy"


def _options(proposals: tuple[str, ...], refusals: tuple[str, ...]) -> tuple[PermissionOption, ...]:
    options = [PermissionOption(id="allow_once", label="Allow once", kind="allow_once")]
    if proposals:
        shown = ", ".join(proposals)
        options.append(
            PermissionOption(
                id="allow_session",
                label=f"Allow for this session: {shown}",
                kind="allow_session",
                rule=shown,
            )
        )
        options.append(
            PermissionOption(
                id="allow_always", label=f"Always allow: {shown}", kind="allow_always", rule=shown
            )
        )
    options.append(PermissionOption(id="reject_once", label="Reject", kind="reject_once"))
    if refusals:
        shown = ", ".join(refusals)
        options.append(
            PermissionOption(
                id="reject_always",
                label=f"Always reject: {shown}",
                kind="reject_always",
                rule=shown,
            )
        )
    return tuple(options)


_PLAIN_WORD = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_RUNNERS = frozenset({"run", "exec", "x", "run-script", "dlx"})


def propose_rules(
    request: PermissionRequest, *, cwd: Path, allow: Sequence[Rule] = ()
) -> tuple[str, ...]:
    """Readable rules that would admit `request` next time: `Bash(npm run test *)` for
    `npm run test -- -k foo` (one per segment not already allowed), `Edit(src/app.py)` for a
    file. Empty when no honest rule exists (a command that cannot be parsed, a computed program
    name)."""
    tool = request.rule_tool
    if tool == "Bash":
        return _propose_commands(request.command, allow)
    if tool in _PATH_TOOLS:
        base = resolve_path(cwd, Path("/"))
        return _unique(f"{tool}({_path_spec(resolve_path(p, base), base)})" for p in request.paths)
    if tool == "Fetch":
        return (f"Fetch(domain:{request.domain.lower()})",) if request.domain else ()
    if tool.startswith("mcp__"):
        return (tool,)
    if request.specifier:
        return (f"{tool}({request.specifier})",)
    return (tool,)


def _propose_commands(command: str | None, allow: Sequence[Rule]) -> tuple[str, ...]:
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
        if segment.dynamic:
            return ()
        prefix = _command_prefix(segment)
        if not prefix:
            return ()
        proposals.append(f"Bash({' '.join(prefix)} *)")
    return _unique(proposals)


def _command_prefix(segment: Segment) -> list[str]:
    prefix: list[str] = []
    limit = segment.assignments + 2
    for index, word in enumerate(segment.words):
        if index >= limit or not _PLAIN_WORD.fullmatch(word) or word.startswith("-"):
            break
        prefix.append(word)
        if index == segment.assignments + 1 and word in _RUNNERS:
            limit += 1
    if len(prefix) <= segment.assignments:
        return []
    return prefix


def _path_spec(path: Path, cwd: Path) -> str:
    if _within(path, cwd) and path != cwd:
        relative = path.relative_to(cwd).as_posix()
        return relative if "/" in relative else f"./{relative}"
    return "/" + str(path)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
