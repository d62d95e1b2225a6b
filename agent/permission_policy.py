"""The permission policy: the pure `decide`.

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

What a rule matches (commands, paths, domains, MCP names) is `agent.permission_rules`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias, assert_never

from agent.backends import Mode
from agent.permission_rules import (
    PermissionRules,
    Rule,
    Subject,
    allowed_by,
    bash_token_fallback,
    dynamic_programs,
    resolve_path,
    rule_matches,
    within,
)
from agent.tools.base import PermissionRequest, ScopeContract

Outcome: TypeAlias = Literal["allow", "deny", "ask"]


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
    subject = Subject.of(request, base)

    for rule in rules.deny:
        if rule_matches(rule, subject, quantifier="any", deny=True):
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
            return Decision("ask", 8, None, "ask mode")
        case "accept-edits":
            if request.is_file_edit:
                return Decision("allow", 8, None, "accept-edits mode: a file edit in the workspace")
            return Decision("ask", 8, None, "accept-edits mode: not a file edit")
        case "auto":
            return Decision("allow", 8, None, "auto mode")
        case _:
            assert_never(mode)


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
