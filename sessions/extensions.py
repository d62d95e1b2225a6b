"""The names of the extension entries earshot appends to a transcript (`ExtensionEntry.name`), and
what each one's `data` holds: the one home of the names, shared by the agent, which writes them,
and by what reads transcripts back (`earshot audit`, `blame`, `sessions replay`, the spend
report), which must not need the agent loaded to do so. Stdlib only.

A name is part of the file format: sessions written by older versions use these, so a name never
changes (the todo list's is `plan`, as transcripts have always had it).
"""

from __future__ import annotations

from typing import Final

TODOS: Final = "plan"
"""The session's latest todo list (`agent.todos`): a list of `{content, status, priority}`."""
USAGE: Final = "usage"
"""The session's token and cost totals after a model call (`agent.context.usage`)."""
TOOL_UI: Final = "tool_ui"
"""How the calls of the tool message before it were shown (`agent.history.replay`):
`{"calls": {call_id: {title, kind, ...}}}`, diffs cut to the changed lines."""
SUBAGENT: Final = "subagent"
"""A `task` call linked to the child session its subagent ran in (`agent.session.subagent`):
`{"call_id", "session_id"}`."""
SUBAGENT_WORK: Final = "subagent_work"
"""A subagent's calls when it ends (`agent.session.subagent`): `{"call_id": the task call,
"calls": [{"id", "title", "state"}]}`; replayed nested in the task call, as shown live."""
TURN_CANCELLED: Final = "turn_cancelled"
"""The turn was cancelled here (no data): `earshot sessions replay` marks the turn."""
UNDO_MISSING: Final = "undo_missing"
"""A batch with no undo snapshot (`agent.history.undo_batches`): `{batch, session, reason,
calls}`, and `{batch, told: true}` once `/undo` has said so."""
PERMISSION: Final = "permission"
"""Who decided about a call, before it ran (`agent.turn.audit_trail`)."""
TOOL_OUTCOME: Final = "tool_outcome"
"""A call's `raw_output` once its result is on disk (`agent.turn.audit_trail`)."""
CLIENT_PROMPT: Final = "system_prompt"
"""The instructions the client gave the session (ACP's unstable `systemPrompt`,
`agent.session.setup.remembered_prompt`): `{"mode": "append" | "override", "text"}`."""

ALL: Final = frozenset(
    {
        TODOS,
        USAGE,
        TOOL_UI,
        SUBAGENT,
        SUBAGENT_WORK,
        TURN_CANCELLED,
        UNDO_MISSING,
        PERMISSION,
        TOOL_OUTCOME,
        CLIENT_PROMPT,
    }
)
"""Every name earshot writes."""
