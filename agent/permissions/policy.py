"""The permission policy: the pure `decide`.

`decide` is pure (rules and a request in, a decision out; it only reads the file system to
resolve symlinks, see what a path holds, and find a hard-linked file's other names) and its
ORDER IS THE POLICY, deliberately not "most specific wins":

1. a matching deny rule refuses, whatever the mode or allow rules; so does reading a secret (a
   credential file, earshot's own settings, a `.env*` file outside the roots: see
   `agent.protected_paths`) unless an allow rule names that place explicitly (`Read(~/.ssh/**)`,
   not `Read(~/**)` or `Read`); for a file with several names (hard links), every name found
   counts (`agent.files.hard_links`): `env_hard`, a link to `.env`, is refused by `Read(./.env)`;
2. read-only tools never prompt, except a `Read` (read, grep, glob, ls) outside the roots in
   `plan`, `ask` and `accept-edits`, which asks unless an allow rule covers it (as Claude Code
   does). `auto` and `yolo` read outside without asking: a command can read the same files in
   those modes, so asking for the tool would only look like a boundary;
3. `plan` refuses every mutating tool;
4. in every mode but `yolo`: a write to a protected path (`.git/`, `.earshot/`, earshot's own
   settings and data, shell start-up files), outside the workspace roots or the declared scope,
   or through a file with more than one hard link (another name may be outside) prompts, and
   nothing but that prompt can allow it (no rule applies; no "always" answer is offered); a
   write whose target bash computes at run time (after `cd`, `> $F`) counts as outside unless
   the active sandbox runs the command (`confined`), which confines it wherever it lands; a call
   that reaches a local network address (loopback, private, link-local: `agent.network`)
   prompts unless an allow rule names its host exactly (`Fetch(domain:localhost)`);
5. `yolo` allows;
6. a matching ask rule prompts, even where an allow rule matches;
7. a matching allow rule allows;
8. otherwise the mode decides: `ask` prompts, `accept-edits` allows file edits (inside the roots,
   which step 4 has established) and prompts the rest, `auto` allows.

What a rule matches (commands, paths, domains, MCP names) is `agent.permissions.rules`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal, TypeAlias, assert_never

from agent.backends import Mode
from agent.files import Decided, other_names
from agent.network import local_host
from agent.permissions.rules import (
    PermissionRules,
    Rule,
    Subject,
    allowed_by,
    bash_token_fallback,
    dynamic_programs,
    literal_places,
    names_place,
    resolve_path,
    rule_matches,
    tool_matches,
    within,
)
from agent.protected_paths import ProtectedPaths, protected_paths
from agent.tools import PermissionRequest, ScopeContract
from providers.records import Record

Outcome: TypeAlias = Literal["allow", "deny", "ask"]


class Decision(Record, kw_only=False):
    outcome: Outcome
    step: int
    """Which of the eight steps decided (see the module docstring)."""
    rule: Rule | None
    reason: str
    grantable: bool = False
    """A prompt the user may answer with a rule ("for this session", "always"): the mode's
    (step 8), a read outside the roots, a local network address. Never a protected path or a
    write outside the roots."""
    decided: tuple[Decided, ...] = ()
    """For a path tool: the places decided on, one per request path (the real path, and the
    file there). The tool must use exactly these (`agent.files.safe_paths`)."""


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
    protected: ProtectedPaths | None = None,
    confined: bool = False,
) -> Decision:
    """Decide one call. `cwd` (relative rule patterns, relative redirections) defaults to the
    first root; `protected` (protected paths and secrets) is computed from `roots` and the
    environment when not given. `confined`: the call is a command the active sandbox will run,
    which the operating system keeps from writing outside the writable places and to protected
    paths; then a write whose target bash computes at run time (`cd src && echo x > y`, `> $F`)
    does not ask at step 4: the sandbox, not the parser, decides where it lands."""
    base = resolve_path(cwd or (roots[0] if roots else Path.cwd()), Path("/"))
    subject = Subject.of(request, base)
    decided = tuple(
        Decided(path, file) for path, file in zip(subject.paths, subject.files, strict=False)
    )
    guard = protected if protected is not None else protected_paths(roots)
    decision = _decide(rules, mode, subject, read_only, roots, scope, guard, confined)
    return replace(decision, decided=decided) if decided else decision


def _decide(
    rules: PermissionRules,
    mode: Mode,
    subject: Subject,
    read_only: bool,
    roots: Sequence[Path],
    scope: ScopeContract | None,
    guard: ProtectedPaths,
    confined: bool,
) -> Decision:
    request = subject.request
    for rule in rules.deny:
        if rule_matches(rule, subject, quantifier="any", deny=True):
            return Decision("deny", 1, rule, f"denied by rule {rule}")
    denied = _bash_deny_fallback(rules.deny, subject)
    if denied is not None:
        return denied
    secret = _secret_read(rules.allow, subject, guard)
    if secret is not None:
        return secret
    linked = _linked_denied(rules, subject, roots, guard)
    if linked is not None:
        return linked

    if read_only:
        return _read_only(rules, mode, subject, roots)
    if mode == "plan":
        return Decision("deny", 3, None, "plan mode: nothing may be changed")

    if mode != "yolo":
        guarded = _guarded_write(subject, roots, scope, guard, confined=confined)
        if guarded is not None:
            return Decision("ask", 4, None, guarded)
        local = _local_network(rules.allow, subject)
        if local is not None:
            return Decision("ask", 4, None, local, grantable=True)
    if mode == "yolo":
        return Decision("allow", 5, None, "yolo mode")

    for rule in rules.ask:
        if rule_matches(rule, subject, quantifier="any", deny=False):
            return Decision("ask", 6, rule, f"ask rule {rule}")
    asked = bash_token_fallback(rules.ask, subject)
    if asked is not None:
        return Decision("ask", 6, asked, f"ask rule {asked} (command not fully readable)")

    allowed = allowed_by(rules.allow, subject)
    if allowed is not None:
        return Decision("allow", 7, allowed, f"allowed by rule {allowed}")

    match mode:
        case "ask":
            return Decision("ask", 8, None, "ask mode", grantable=True)
        case "accept-edits":
            if request.is_file_edit:
                return Decision("allow", 8, None, "accept-edits mode: a file edit in the workspace")
            return Decision("ask", 8, None, "accept-edits mode: not a file edit", grantable=True)
        case "auto":
            return Decision("allow", 8, None, "auto mode")
        case _:
            assert_never(mode)


_READS_ASK_OUTSIDE: frozenset[Mode] = frozenset({"plan", "ask", "accept-edits"})


def _read_only(
    rules: PermissionRules, mode: Mode, subject: Subject, roots: Sequence[Path]
) -> Decision:
    if mode not in _READS_ASK_OUTSIDE or not tool_matches("Read", subject.request.rule_tool):
        return Decision("allow", 2, None, "read-only")
    resolved_roots = [resolve_path(root, Path("/")) for root in roots]
    outside = [p for p in subject.paths if not any(within(p, root) for root in resolved_roots)]
    if not outside:
        return Decision("allow", 2, None, "read-only")
    allowed = allowed_by(rules.allow, subject)
    if allowed is not None:
        return Decision("allow", 2, allowed, f"read outside the workspace allowed by {allowed}")
    return Decision("ask", 2, None, f"reads outside the workspace: {outside[0]}", grantable=True)


def _secret_read(allow: Sequence[Rule], subject: Subject, guard: ProtectedPaths) -> Decision | None:
    """A `Read` of a secret with no allow rule naming that place explicitly: denied."""
    if subject.request.rule_tool != "Read":
        return None
    for path, written in zip(subject.paths, subject.lexical, strict=True):
        place = guard.secret_root(path) or guard.secret_root(written)
        if place is None:
            continue
        one = replace(subject, paths=(path,), lexical=(written,))
        if any(
            rule.pattern is not None
            and tool_matches(rule.tool, "Read")
            and rule_matches(rule, one, quantifier="all", deny=False)
            and names_place(rule.pattern, place, subject.cwd)
            for rule in allow
        ):
            continue
        return Decision(
            "deny",
            1,
            None,
            f"{written} holds secrets (credentials, or earshot's own settings), which are not "
            f"read unless you allow it with an explicit rule, such as Read(/{place}/**) or "
            f"Read(/{place})",
        )
    return None


def _guarded_write(
    subject: Subject,
    roots: Sequence[Path],
    scope: ScopeContract | None,
    guard: ProtectedPaths,
    *,
    confined: bool,
) -> str | None:
    """Why a write needs the user's approval of this very call; None when it does not. A target
    the parser could read and that is protected or outside asks even `confined`: the sandbox
    would stop it, and the prompt can offer to run it outside instead."""
    for path in subject.writes:
        if guard.covers(path):
            return guard.reason(path)
    outside = _outside(subject.writes, roots, scope)
    if outside is None and subject.unknown_writes and not confined:
        outside = f"writes to a path computed at run time: {subject.unknown_writes[0]}"
    if outside is not None:
        return outside
    known = dict(zip(subject.paths, subject.files, strict=False))
    for path in subject.writes:
        file = known.get(path)
        links = file.nlink if file is not None and file.linked else _hard_links(path)
        if links > 1:
            return (
                f"writes through a file with {links} hard links: {path} (the same file has "
                "another name, which may be outside the workspace)"
            )
    return None


def _hard_links(path: Path) -> int:
    try:
        status = os.stat(path)
    except OSError:
        return 0
    return status.st_nlink if stat.S_ISREG(status.st_mode) else 0


def _linked_denied(
    rules: PermissionRules, subject: Subject, roots: Sequence[Path], guard: ProtectedPaths
) -> Decision | None:
    """Step 1 for the other names of a file with several (hard links): each is decided as if
    the call named it (deny rules; for a read, the secret places)."""
    linked = [
        (path, file)
        for path, file in zip(subject.paths, subject.files, strict=False)
        if file is not None and file.linked
    ]
    if not linked:
        return None  # the common case: nothing to look for
    tool = subject.request.rule_tool
    deny = [
        rule for rule in rules.deny if rule.pattern is not None and tool_matches(rule.tool, tool)
    ]
    reading = tool == "Read"
    if not deny and not reading:
        return None
    places = [place for rule in deny for place in literal_places(rule.pattern or "", subject.cwd)]
    if reading:
        places.extend(guard.secrets)
    resolved_roots = [resolve_path(root, Path("/")) for root in roots]
    for path, file in linked:
        for name in other_names(file, places, resolved_roots):
            if name == path:
                continue
            one = replace(subject, paths=(name,), lexical=(name,), files=(file,))
            rule = next(
                (r for r in deny if rule_matches(r, one, quantifier="any", deny=True)), None
            )
            if rule is not None:
                return Decision(
                    "deny",
                    1,
                    rule,
                    f"{path} is another name (a hard link) of {name}, which rule {rule} denies",
                )
            if reading and guard.secret_root(name) is not None:
                return Decision(
                    "deny",
                    1,
                    None,
                    f"{path} is another name (a hard link) of {name}, which holds secrets",
                )
    return None


def _local_network(allow: Sequence[Rule], subject: Subject) -> str | None:
    request = subject.request
    domain = request.domain
    if not request.local_network and not (
        request.rule_tool == "Fetch" and domain is not None and local_host(domain)
    ):
        return None
    if domain is not None and any(_names_host(rule, domain) for rule in allow):
        return None
    shown = domain or "the host"
    return f"reaches a local network address ({shown}: loopback, private or link-local)"


def _names_host(rule: Rule, domain: str) -> bool:
    if rule.tool != "Fetch" or rule.pattern is None or "*" in rule.pattern:
        return False
    want = rule.pattern.removeprefix("domain:").strip().lower().rstrip(".")
    return want == domain.strip().lower().rstrip(".")


def _outside(
    writes: Sequence[Path], roots: Sequence[Path], scope: ScopeContract | None
) -> str | None:
    resolved_roots = [resolve_path(root, Path("/")) for root in roots]
    for path in writes:
        if not any(within(path, root) for root in resolved_roots):
            return f"writes outside the workspace: {path}"
    if scope is not None and scope.declared:
        declared = [resolve_path(entry, Path("/")) for entry in scope.declared]
        for path in writes:
            if not any(within(path, entry) for entry in declared):
                return f"out of scope: {path} is not in the declared scope"
    return None


def _bash_deny_fallback(deny: Sequence[Rule], subject: Subject) -> Decision | None:
    command = subject.command
    if command is None or subject.request.rule_tool != "Bash":
        return None
    patterned = [rule for rule in deny if rule.tool == "Bash" and rule.pattern is not None]
    if not patterned:
        return None
    if command.parsed:
        for segment in command.segments:
            if dynamic_programs(segment):
                rule = patterned[0]
                return Decision(
                    "deny",
                    1,
                    rule,
                    f"the program `{segment.text}` runs is computed at run time, so deny rule "
                    f"{rule} cannot be checked; spell the command out",
                )
    rule = bash_token_fallback(patterned, subject)
    if rule is not None and command.parsed and command.hidden:
        reason = f"deny rule {rule} cannot be checked: {command.hidden[0]}"
        return Decision("deny", 1, rule, reason)
    if rule is not None:
        return Decision("deny", 1, rule, f"denied by rule {rule} (command not fully readable)")
    return None
