"""What a session is called and what it plans: its title and its todo list.

The title is the first prompt's first line (`title_from`) unless the user named the session
(`/title`, ACP `session/set_title`); a name the user gave is never replaced by one made up from
a prompt. Either way it is a title entry in the transcript (and the store's sidecar, which
listings read).

The todo list is one plan with an id (`agent.todos.TodoPlan`), which the model keeps with the
`todo` tool: it is recorded before it is shown, so what the user saw is on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from agent.events import AgentEvent, TitleChanged, TodoItem, TodosChanged
from agent.history.session_transcript import SessionTranscript
from agent.todos import TodoPlan
from agent.turn.inbox import title_from
from providers.types import Message

TITLE_MAX: Final = 200
"""Characters kept of a title the user gives (a longer one is cut, not refused)."""


def normal_title(title: str) -> str:
    """A title as stored: one line (every run of white space one space), at most `TITLE_MAX`
    characters.

    Raises:
        ValueError: nothing is left of it.
    """
    normal = " ".join(title.split())[:TITLE_MAX].rstrip()
    if not normal:
        raise ValueError("a title needs at least one character that is not white space")
    return normal


class SessionLabels:
    """The session's title and todo list; `announce` tells the running turn's consumer."""

    def __init__(
        self, transcript: SessionTranscript, announce: Callable[[AgentEvent], None]
    ) -> None:
        self._transcript = transcript
        self._announce = announce
        self.title: str | None = transcript.stored.title
        self.plan: TodoPlan = transcript.plan()

    async def prompt_appended(self, message: Message, entry_id: str) -> None:
        """A prompt was recorded: the first one names a session that has no title yet."""
        if self.title is not None:
            return
        title = title_from(message.text)
        if title is None:
            return
        self.title = title
        await self._transcript.record_title(title)
        self._announce(TitleChanged(title=title))

    async def set_title(self, title: str) -> str:
        """The user names the session; returns the title as stored (`normal_title`).

        Raises:
            ValueError: an empty title.
            sessions.SessionBusy: another process has the session open.
        """
        normal = normal_title(title)
        stored = self._transcript.stored
        if not stored.writable:
            await stored.claim()
        await self._transcript.record_title(normal)
        self.title = normal
        self._announce(TitleChanged(title=normal))
        return normal

    async def publish_todos(self, items: tuple[TodoItem, ...]) -> None:
        """The `todo` tool's list (its sink): recorded, then shown."""
        entry_id = await self._transcript.record_todos(items)
        self.plan = self.plan.then(entry_id, items)
        self._announce(TodosChanged(items=items, plan_id=self.plan.plan_id))

    def cleared(self) -> None:
        """`/clear`: the conversation starts again without a list (the plan is removed)."""
        self.plan = TodoPlan(self.plan.plan_id, ())
        self._announce(TodosChanged(items=(), plan_id=self.plan.plan_id))

    def rewound(self, emit: Callable[[AgentEvent], None]) -> None:
        """The conversation moved to another branch: the list as it stood there."""
        self.plan = self._transcript.plan()
        emit(TodosChanged(items=self.plan.items, plan_id=self.plan.plan_id))


__all__ = ["TITLE_MAX", "SessionLabels", "normal_title"]
