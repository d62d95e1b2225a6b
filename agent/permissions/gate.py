"""The permission gate: applies `decide` to each call and asks the user when it says "ask".

It owns what the pure policy cannot: the prompt's options (with the rules an answer would add),
the session's grants and refusals, persisting "always" answers, and the `Read` deny checks that
search tools apply to the paths they list.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, assert_never

from agent.backends import (
    Interaction,
    Mode,
    PermissionOption,
    PermissionOptionKind,
    PermissionPrompt,
    ToolUi,
    command_title,
)
from agent.files import Decided, FileId
from agent.permissions.policy import Decision, decide
from agent.permissions.proposals import propose_refusals, propose_rules
from agent.permissions.rules import (
    PermissionRules,
    Rule,
    Subject,
    allowed_by,
    parse_rule,
    resolve_path,
    tool_matches,
)
from agent.protected_paths import ProtectedPaths, protected_paths
from agent.tools import PermissionRequest, ScopeContract
from providers.logs import get_logger
from providers.records import Record

if TYPE_CHECKING:
    from agent.sandbox import SandboxStatus

_log = get_logger(__name__)

_RG_GLOB_SPECIAL = frozenset("[]{},!\\")


class GateOutcome(Record, kw_only=False):
    allowed: bool
    cancelled: bool
    source: str
    """Who decided: a rule's source (`user`, `project`, `local`, `remembered`, `session`,
    `cli`), `mode`, `policy` (read-only, plan, outside the roots), `command` (outside what the
    running slash command's `allowed_tools` allow), or `prompt` (the user's answer)."""
    answer: PermissionOptionKind | None
    """The option the user chose; None when nobody was asked."""
    reason: str
    unsandboxed: bool = False
    """The user chose to run this command outside the command sandbox (this call only)."""
    rule: str | None = None
    """The rule that decided (`Bash(npm test *)`), when one did."""
    rule_file: str | None = None
    """The settings file that rule came from, when known."""
    decided: tuple[Decided, ...] = ()
    """The places the decision was about (`Decision.decided`): what the call may use."""


PersistRule: TypeAlias = Callable[[str, str], None]
"""`persist_rule(list_name, rule)`, e.g. `agent.settings.scopes.append_rule` bound to the session's
remembered file (the user's own, keyed by project: `agent.settings.trust`)."""

_GRANTABLE_STEPS = frozenset({8})
"""Only a prompt from the mode (step 8), or one the policy marks `grantable` (a read outside the
roots, a local network address), can be answered by a rule: a session or "always" grant cannot
lift an ask rule (6), a protected path or an out-of-roots write (4), so offering one would
mislead (and such a rule would not be applied to those calls anyway)."""


class RuleBook:
    """The settings files' rules as a session applies them: held apart from the gate, so that
    what is handed the gate (every tool, through its `Tooling`) has no way to change them. Only
    the session's `/permissions` command (`agent.permissions.admin`) holds the book, and replaces
    its rules with the files' after the user edited one of their own.

    Other sessions edit the same files (an "always" answer, `/permissions revoke`), and so does
    the user by hand: with `reload` and the `files` it reads, `refresh` reads the rules again
    whenever one of the files changed (inode, modification time or size) since."""

    def __init__(
        self,
        rules: PermissionRules,
        *,
        reload: Callable[[], PermissionRules] | None = None,
        files: Sequence[Path] = (),
    ) -> None:
        self.rules = rules
        self.only: tuple[Rule, ...] | None = None
        """While a command whose `allowed_tools` narrow the turn runs: a call none of these
        match is refused (a call one matches is still decided as usual)."""
        self._reload = reload
        self._files = tuple(files)
        self._seen = _signatures(self._files)

    def refresh(self) -> bool:
        """Read the rules again if one of their files changed since they were read; True when
        they were. A file that cannot be read now leaves the rules as they were."""
        if self._reload is None:
            return False
        seen = _signatures(self._files)
        if seen == self._seen:
            return False
        self._seen = seen
        try:
            self.rules = self._reload()
        except Exception:
            _log.warning("could not read the permission rules again", exc_info=True)
            return False
        return True


def _signatures(files: Sequence[Path]) -> tuple[tuple[int, int, int] | None, ...]:
    signatures: list[tuple[int, int, int] | None] = []
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            signatures.append(None)
        else:
            signatures.append((info.st_ino, info.st_mtime_ns, info.st_size))
    return tuple(signatures)


class PermissionGate:
    """Applies `decide` to each call and asks the user when it says "ask".

    The only way to add a rule is a user's answer to a prompt: there is deliberately no method to
    grant a permission, so nothing that runs someone else's code (MCP servers, skills, hooks,
    subagents) can. Session grants live in memory only and are not restored on resume; "always"
    answers go through `persist_rule` (the user's remembered file for the project).
    """

    def __init__(
        self,
        rules: PermissionRules | RuleBook,
        *,
        cwd: Path,
        roots: Sequence[Path],
        persist_rule: PersistRule | None = None,
        protected: ProtectedPaths | None = None,
        sandbox: SandboxStatus = "off",
    ) -> None:
        self._book = rules if isinstance(rules, RuleBook) else RuleBook(rules)
        self._sandbox: SandboxStatus = sandbox
        self._cwd = resolve_path(cwd, Path("/"))
        self._roots = tuple(resolve_path(root, Path("/")) for root in roots) or (self._cwd,)
        self._persist_rule = persist_rule
        self._protected = protected if protected is not None else protected_paths(self._roots)
        self._granted: list[Rule] = []
        self._refused: list[Rule] = []

    @property
    def _rules(self) -> PermissionRules:
        return self._book.rules

    @property
    def rules(self) -> PermissionRules:
        """The rules read from the settings files (not the session's answers)."""
        return self._book.rules

    def answered_rules(self) -> tuple[tuple[str, Rule], ...]:
        """`(list name, rule)` for each rule this session's answers added: `session` grants
        (memory only) and `remembered` ones (also saved to the remembered file)."""
        return (
            *(("allow", rule) for rule in self._granted),
            *(("deny", rule) for rule in self._refused),
        )

    def forget(self, rule: str) -> int:
        """Drop the rules this session's answers added whose text is `rule` (normalised by
        `parse_rule`); returns how many. Only ever narrows what is allowed or refused: the
        `/permissions revoke` command."""
        wanted = str(parse_rule(rule))
        before = len(self._granted) + len(self._refused)
        self._granted = [kept for kept in self._granted if str(kept) != wanted]
        self._refused = [kept for kept in self._refused if str(kept) != wanted]
        return before - len(self._granted) - len(self._refused)

    @property
    def protected(self) -> ProtectedPaths:
        return self._protected

    def _effective_rules(self) -> PermissionRules:
        return replace(
            self._rules,
            allow=self._rules.allow + tuple(self._granted),
            deny=self._rules.deny + tuple(self._refused),
        )

    def _read_deny_rules(self) -> tuple[Rule, ...]:
        return tuple(
            rule for rule in (*self._rules.deny, *self._refused) if tool_matches(rule.tool, "Read")
        )

    def read_denied(self, path: Path, file: FileId | None = None) -> bool:
        """Whether reading `path` is refused at step 1 of `decide`: a deny rule, or a secret no
        explicit allow rule names. Search tools (grep, glob, ls) leave such paths out of their
        results (the gate only sees the directory they search), and skills are not loaded from
        them. `file`: what the caller holds open there (its other names count too)."""
        files = () if file is None else (file,)
        request = PermissionRequest(rule_tool="Read", description="", paths=(path,), files=files)
        allow = tuple(
            rule
            for rule in (*self._rules.allow, *self._granted)
            if rule.pattern is not None and tool_matches(rule.tool, "Read")
        )
        rules = PermissionRules(deny=self._read_deny_rules(), allow=allow)
        decision = decide(
            rules,
            "yolo",
            request,
            read_only=True,
            roots=self._roots,
            cwd=self._cwd,
            protected=self._protected,
        )
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
        if self._book.refresh():
            # The file is the truth for "always" answers: one revoked elsewhere goes here too.
            self._granted = [rule for rule in self._granted if rule.source != "remembered"]
            self._refused = [rule for rule in self._refused if rule.source != "remembered"]
        only = self._book.only
        if only is not None and allowed_by(only, Subject.of(request, self._cwd)) is None:
            reason = "not among the tools the running command allows"
            return GateOutcome(False, False, "command", None, reason)
        rules = self._effective_rules()
        decision = decide(
            rules,
            mode,
            request,
            read_only=read_only,
            roots=self._roots,
            scope=scope,
            cwd=self._cwd,
            protected=self._protected,
            # Every command runs in the sandbox when it is active: only the answer to a prompt
            # (which this decision would be) runs one outside it.
            confined=self._sandbox == "active" and request.command is not None,
        )
        if self._sandbox == "unavailable":
            decision = _without_sandbox(decision, request)
        outcome = await self._outcome(
            decision, rules, request, call_id, tool_name, ui, raw_input, interaction
        )
        return replace(outcome, decided=decision.decided) if outcome.allowed else outcome

    async def _outcome(
        self,
        decision: Decision,
        rules: PermissionRules,
        request: PermissionRequest,
        call_id: str,
        tool_name: str,
        ui: ToolUi,
        raw_input: object,
        interaction: Interaction,
    ) -> GateOutcome:
        source = _decision_source(decision)
        rule = decision.rule
        rule_text = None if rule is None else str(rule)
        rule_file = None if rule is None else rule.file
        match decision.outcome:
            case "allow":
                return GateOutcome(
                    True, False, source, None, decision.reason, rule=rule_text, rule_file=rule_file
                )
            case "deny":
                return GateOutcome(
                    False, False, source, None, decision.reason, rule=rule_text, rule_file=rule_file
                )
            case "ask":
                pass
            case _:
                assert_never(decision.outcome)

        proposals = (
            propose_rules(request, cwd=self._cwd, allow=rules.allow)
            if decision.grantable or decision.step in _GRANTABLE_STEPS
            else ()
        )
        refusals = propose_refusals(request, cwd=self._cwd, allow=rules.allow)
        options = _options(proposals, refusals)
        command = request.command
        if command is not None and not ui.title.startswith(command):
            # What the user approves is the command itself, not a description of it.
            ui = replace(ui, title=command_title(command, ui.title))
        prompt = PermissionPrompt(
            call_id=call_id,
            tool_name=tool_name,
            ui=ui,
            raw_input=raw_input,
            reason=decision.reason,
            options=options,
            command=command,
        )
        answer = await interaction.request_permission(prompt)
        if answer.option_id is None:
            return GateOutcome(False, True, "prompt", None, "the user cancelled")
        chosen = next((option for option in options if option.id == answer.option_id), None)
        if chosen is None:
            return GateOutcome(False, False, "prompt", None, f"unknown answer {answer.option_id!r}")
        outcome = self._apply(chosen, proposals, refusals)
        if answer.reason is not None and not outcome.allowed:
            # Refused by a front end that cannot ask (print mode), not by a person.
            outcome = replace(outcome, reason=answer.reason)
        return outcome

    def _apply(
        self, chosen: PermissionOption, proposals: tuple[str, ...], refusals: tuple[str, ...]
    ) -> GateOutcome:
        kind = chosen.kind
        match kind:
            case "allow_once":
                if chosen.unsandboxed:
                    reason = "allowed once outside the sandbox by the user"
                    return GateOutcome(True, False, "prompt", kind, reason, unsandboxed=True)
                return GateOutcome(True, False, "prompt", kind, "allowed once by the user")
            case "allow_session":
                self._granted.extend(parse_rule(text, "session") for text in proposals)
                return GateOutcome(True, False, "prompt", kind, "allowed for this session")
            case "allow_always":
                note = self._persist("allow", proposals)
                source = "session" if note else "remembered"  # kept here alone if not saved
                self._granted.extend(parse_rule(text, source) for text in proposals)
                return GateOutcome(True, False, "prompt", kind, "always allowed" + note)
            case "reject_once":
                return GateOutcome(False, False, "prompt", kind, "rejected by the user")
            case "reject_always":
                note = self._persist("deny", refusals)
                source = "session" if note else "remembered"
                self._refused.extend(parse_rule(text, source) for text in refusals)
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


def _without_sandbox(decision: Decision, request: PermissionRequest) -> Decision:
    """No command sandbox could run although the settings want one: every command asks, in every
    mode, whatever allow rules say (an allow rule was written for confined commands, and
    `Bash(npm run test *)` runs whatever `package.json` says). Deny rules still refuse, and the
    answer covers the one call: no rule is offered (step 4 is never grantable)."""
    if request.command is None or decision.outcome == "deny":
        return decision
    if decision.outcome == "ask" and decision.step not in _GRANTABLE_STEPS:
        return decision  # asks already, and offers no rule
    return Decision("ask", 4, None, "no command sandbox is available: every command asks")


def _options(proposals: tuple[str, ...], refusals: tuple[str, ...]) -> tuple[PermissionOption, ...]:
    """Allow once, the two "always" scopes when a rule may answer, reject, and "always reject".
    Never "run outside the sandbox": that is asked on its own, only once the sandbox has stopped
    the command (`agent.tools.bash`), so that no plain "allow" can mean it. A front end with
    fewer kinds than these offers the safer "always" (`acp_server.permission_prompts`)."""
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


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
