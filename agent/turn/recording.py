"""What the turn loop writes to the transcript, and when: acknowledged means durable.

Nothing is shown as done before the entry recording it is on disk. The prompt is appended before
`UserMessageAdded`; each tool result the moment its call finishes and before its
`ToolCallFinished` (`ResultRecorder`: a tool message per result, joined in call order for the
model by `sessions.repair.join_results`); the final answer before `TurnEnded`. A process killed at
any point loses only work nobody was shown as done, and the calls it leaves without results are
answered "interrupted" by the next process to open the session (`sessions.repair`). When the
transcript cannot be written (disk full, read-only), the turn stops at that append and ends with
an error saying so (`not_saved_message`); the process keeps serving and the next turn tries again.

Results that finish together (a group of read-only calls) share one append, so one write and one
sync: a call that finishes while another result is being written waits for that write, then
writes itself together with every result that finished meanwhile.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from providers.types import Message, ToolResultPart
from sessions import SessionBusy, SessionWriteFailed

NotSaved = SessionWriteFailed | SessionBusy
"""Why the transcript could not be written."""


class ResultRecorder:
    """Appends tool results through `append`, several at once when they finish together."""

    def __init__(self, append: Callable[[Message, str | None], Awaitable[object]]) -> None:
        self._append = append
        self._lock = anyio.Lock()
        self._waiting: list[ToolResultPart] = []
        self._written: dict[int, bool] = {}
        """Results another call's write took along (by identity): whether that write worked."""
        self.failure: NotSaved | None = None

    async def record(self, result: ToolResultPart) -> bool:
        """Append `result` (with whatever else is waiting); False when it could not be written
        (`failure` says why). Shielded: a result half-recorded when the turn is cancelled would
        leave the transcript unsure of what it holds."""
        done = False
        with anyio.CancelScope(shield=True):
            self._waiting.append(result)
            async with self._lock:
                taken = self._written.pop(id(result), None)
                if taken is not None:
                    done = taken
                else:
                    done = await self._write_waiting(result)
        return done

    async def _write_waiting(self, result: ToolResultPart) -> bool:
        batch, self._waiting = self._waiting, []
        try:
            await self._append(Message(role="tool", parts=[*batch]), None)
        except (SessionWriteFailed, SessionBusy) as exc:
            self.failure = self.failure or exc
            done = False
        else:
            done = True
        for other in batch:
            if other is not result:
                self._written[id(other)] = done
        return done


async def try_append(
    append: Callable[[Message, str | None], Awaitable[object]],
    message: Message,
    entry_id: str | None = None,
) -> NotSaved | None:
    """`append(message, entry_id)`; why it failed, when the transcript could not be written."""
    try:
        await append(message, entry_id)
    except (SessionWriteFailed, SessionBusy) as exc:
        return exc
    return None


def not_saved_message(exc: NotSaved) -> str:
    """What a turn that stopped because the transcript could not be written ends by saying."""
    if isinstance(exc, SessionBusy):
        return f"This turn was stopped: {exc}"
    return (
        f"This turn was stopped because {exc}. What it did after that point is not saved in "
        "the session. Free some disk space (or make the data directory writable) and send the "
        "next prompt: the session continues from what was saved."
    )
