"""`/rewind [N]` and `/fork [N]` (`agent.history.branches` holds what they do).

Without N both list the user messages of the current branch, numbered. `/rewind N` asks, when
tool calls after that point changed files undo can restore, whether to put the files back too:
a permission-style prompt ("Rewind conversation and files" / "Conversation only"; cancelling it
cancels the rewind). `/rewind N files` and `/rewind N conversation` answer in advance (print
mode has nobody to ask: there the default is the conversation only). After a rewind the command
says so with `CommandOutput(branch_changed=True)`: a front end showing the conversation shows it
again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Final

from agent.backends import (
    Interaction,
    PermissionOption,
    PermissionPrompt,
    ToolUi,
)
from agent.events import (
    AgentEvent,
    CommandOutput,
    ToolCallFinished,
    ToolCallReady,
    ToolCallStarted,
)
from agent.history import Branches, UserMessage, listing, parse_number, shorten
from providers.types import TextPart, ToolResultPart
from sessions import UndoSnapshotEntry

REWIND_FILES: Final = "rewind-files"
REWIND_CONVERSATION: Final = "rewind-conversation"
REWIND_NONE: Final = "rewind-none"
_CHOICE_WORDS: Final = {
    "files": True,
    "--files": True,
    "conversation": False,
    "--conversation": False,
}

Emit = Callable[[AgentEvent], None]


async def rewind_command(
    branches: Branches, argument: str, emit: Emit, interaction: Interaction | None
) -> bool:
    """`/rewind [N]`; True when it rewound (the branch changed)."""
    messages = branches.user_messages()
    if not argument.strip():
        emit(CommandOutput(text=_numbered("rewind", listing(messages), bool(messages))))
        return False
    chosen = parse_number(argument, messages)
    if isinstance(chosen, str):
        emit(CommandOutput(text=chosen))
        return False
    words = argument.split()[1:]
    preset = _CHOICE_WORDS.get(words[0].lower()) if words else None
    restore = False
    snapshots = branches.file_changes_since(chosen)
    if snapshots:
        if preset is not None:
            restore = preset
        else:
            files = restored_files(snapshots)
            answer = await _ask_about_files(chosen, files, emit, interaction)
            if answer is None:
                emit(CommandOutput(text="Rewind cancelled: nothing changed."))
                return False
            restore = answer
    rewound = await branches.rewind(chosen, restore_files=restore)
    said = f"Rewound to before message {chosen.number} ({shorten(chosen.text)})."
    if rewound.files is not None:
        said += f" {rewound.files}"
    emit(CommandOutput(text=said, branch_changed=True))
    return True


async def fork_command(branches: Branches, argument: str, emit: Emit) -> None:
    messages = branches.user_messages()
    chosen: UserMessage | None = None
    if argument.strip():
        parsed = parse_number(argument, messages)
        if isinstance(parsed, str):
            emit(CommandOutput(text=parsed))
            return
        chosen = parsed
    try:
        forked = await branches.fork(chosen)
    except RuntimeError as exc:
        emit(CommandOutput(text=f"Cannot fork here: {exc}."))
        return
    where = "the whole conversation" if chosen is None else f"before message {chosen.number}"
    emit(
        CommandOutput(
            text=(
                f"Forked {where} into session {forked}. Open it from your editor's session "
                f"history (Zed: the history panel lists it), or `earshot -p --resume {forked}`."
            )
        )
    )


def _numbered(command: str, listed: str, any_messages: bool) -> str:
    if not any_messages:
        return listed
    return f"{listed}\n\nUse `/{command} N` to {command} to before message N."


FILES_NAMED = 8
"""Files named in the rewind question; more are counted."""


def restored_files(snapshots: Sequence[UndoSnapshotEntry]) -> str:
    """What restoring `snapshots` puts back, in words: the files the batches named, and for a
    batch that ran a command (which snapshots the whole project, `.`) what the commands changed."""
    named = sorted({path for entry in snapshots for path in entry.paths if path != "."})
    shown = ", ".join(named[:FILES_NAMED])
    if len(named) > FILES_NAMED:
        shown += f" and {len(named) - FILES_NAMED} more"
    if any("." in entry.paths for entry in snapshots):
        commands = "whatever the commands run since changed in the project"
        shown = f"{shown}, and {commands}" if shown else commands
    return shown


async def _ask_about_files(
    message: UserMessage, files: str, emit: Emit, interaction: Interaction | None
) -> bool | None:
    """True: files too; False: the conversation only; None: the user cancelled. The question
    names the files a "yes" puts back (`files`: `restored_files`)."""
    if interaction is None:
        return False
    call_id = f"rewind-{uuid.uuid4().hex[:12]}"
    title = f"Rewind to before message {message.number}; also restore {files}?"
    ui = ToolUi(title=title, kind="other")
    # The prompt names a tool call, which the front end must have been shown first (ACP).
    emit(ToolCallStarted(call_id=call_id, name="rewind", ui=ui))
    emit(ToolCallReady(call_id=call_id, name="rewind", arguments={}, ui=ui))
    answer = await interaction.request_permission(
        PermissionPrompt(
            call_id=call_id,
            tool_name="rewind",
            ui=ui,
            raw_input={"message": message.number, "restores": files},
            reason="tool calls after that message changed files that undo can restore",
            # Both answers rewind, so neither is a rejection; the lighter one (files untouched)
            # takes the plain "allow" every client binds its first key to. One option per kind.
            options=(
                PermissionOption(
                    id=REWIND_CONVERSATION, label="Rewind the conversation only", kind="allow_once"
                ),
                PermissionOption(
                    id=REWIND_FILES,
                    label=f"Rewind the conversation and restore {files}",
                    kind="allow_always",
                ),
                PermissionOption(id=REWIND_NONE, label="Don't rewind", kind="reject_once"),
            ),
        )
    )
    chosen = answer.option_id
    if chosen not in (REWIND_FILES, REWIND_CONVERSATION):
        chosen = None  # "don't rewind", or an answer that is none of the options
    text = {REWIND_FILES: "files too", REWIND_CONVERSATION: "conversation only"}.get(
        chosen or "", "cancelled"
    )
    emit(
        ToolCallFinished(
            call_id=call_id,
            name="rewind",
            status="completed" if chosen is not None else "interrupted",
            result=ToolResultPart(
                tool_call_id=call_id, name="rewind", content=[TextPart(text=text)]
            ),
        )
    )
    if chosen is None:
        return None
    return chosen == REWIND_FILES
