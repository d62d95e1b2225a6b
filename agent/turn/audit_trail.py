"""What the transcript keeps for `earshot audit` and `earshot sessions replay`: each permission
decision as it is made, and what a call's process or request gave.

Two append-only extension entries (read back by the composition root, never by the loop):
- `permission`: one per decision worth auditing, written when the gate (or a `pre_tool_use`
  hook) decides, before the call runs: who decided (a rule and the settings file it came from,
  the mode, the policy, the user's answer, a hook), the mode, and what the call asked for. A
  read-only call the policy or mode lets through without asking is not recorded: it changes
  nothing and would double the transcript of a search-heavy turn.
- `tool_outcome`: one per call that reported `raw_output` (a command's exit code and whether it
  ran in the sandbox, a fetch's status and URL), written once its result is on disk.

A failure to write either is logged and the turn goes on: the tool result itself is what the
transcript must not lose.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import anyio

from providers.logs import get_logger
from providers.types import JsonValue
from sessions import extensions

if TYPE_CHECKING:
    from agent.backends import Mode, PermissionOptionKind
    from agent.tools import PermissionRequest
    from sessions import Session

_log = get_logger(__name__)

MAX_RAW_OUTPUT_CHARS = 4_000
"""A `raw_output` larger than this (an MCP tool's structured content) is not recorded."""


class AuditTrail:
    """Appends the audit entries of one session (`session` None: nothing is recorded)."""

    def __init__(self, session: Session | None) -> None:
        self._session = session

    async def decision(
        self,
        *,
        call_id: str,
        tool: str,
        request: PermissionRequest | None,
        read_only: bool,
        allowed: bool,
        source: str,
        mode: Mode,
        answer: PermissionOptionKind | None = None,
        reason: str = "",
        rule: str | None = None,
        rule_file: str | None = None,
        unsandboxed: bool = False,
        follow_up: bool = False,
    ) -> None:
        """Record one decision; `source` is the gate's (`agent.permissions.gate.GateOutcome`),
        `hook` for a `pre_tool_use` hook's block, `error` for a check that failed."""
        if allowed and read_only and source in ("policy", "mode") and not follow_up:
            return
        data: dict[str, JsonValue] = {
            "call_id": call_id,
            "tool": tool,
            "allowed": allowed,
            "source": source,
            "mode": mode,
            "answer": answer,
            "reason": reason,
            "rule": rule,
            "rule_file": rule_file,
            "unsandboxed": unsandboxed,
            "follow_up": follow_up,
        }
        if request is not None:
            data["subject"] = _subject(request)
        await self._append(extensions.PERMISSION, data)

    async def outcome(self, *, call_id: str, tool: str, status: str, raw_output: JsonValue) -> None:
        """Record what a finished call reported (nothing when it reported nothing)."""
        if not isinstance(raw_output, dict) or not raw_output:
            return
        try:
            size = len(json.dumps(raw_output))
        except (TypeError, ValueError):
            return
        if size > MAX_RAW_OUTPUT_CHARS:
            return
        data: dict[str, JsonValue] = {
            "call_id": call_id,
            "tool": tool,
            "status": status,
            "raw_output": raw_output,
        }
        await self._append(extensions.TOOL_OUTCOME, data)

    async def _append(self, name: str, data: dict[str, JsonValue]) -> None:
        session = self._session
        if session is None:
            return
        from sessions import ExtensionEntry

        with anyio.CancelScope(shield=True):
            try:
                await session.append(ExtensionEntry(name=name, data=data))
            except Exception:
                _log.warning("could not record an audit entry", name=name, exc_info=True)


def _subject(request: PermissionRequest) -> dict[str, JsonValue]:
    subject: dict[str, JsonValue] = {
        "rule_tool": request.rule_tool,
        "description": request.description,
    }
    if request.command is not None:
        subject["command"] = request.command
    if request.paths:
        subject["paths"] = [str(path) for path in request.paths]
    if request.domain is not None:
        subject["domain"] = request.domain
    if request.mcp_server is not None:
        subject["mcp_server"] = request.mcp_server
    if request.local_network:
        subject["local_network"] = True
    return subject
