"""The transcript as the turn loop and the context shaper see it: the conversation so far, and the
writes a turn makes to it.

Two implementations: a session's (`agent.history.session_transcript.SessionTranscript`, the JSONL
file, where every write is durable before it is acknowledged) and a subagent's
(`InMemoryTranscript`: only the task prompt and what the subagent did, gone when it answers).
The loop and the shaper never know which; neither writes anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from agent.backends import ToolUi
from providers.types import Message, TextPart
from sessions.repair import Memo, join_results


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """What a compaction decided, for the transcript to record: from now on `preamble` stands for
    every message before `first_kept` (an object of the history the compaction was computed
    from). Nothing is deleted: `Transcript.messages` keeps everything."""

    preamble: str
    first_kept: Message
    tokens_before: int
    instructions: str | None = None


class Transcript(Protocol):
    def history(self) -> list[Message]:
        """What the next request starts from: every message, or after a compaction its preamble
        (as a user message) and the messages it kept. The tool messages answering one
        assistant message are joined into one, in call order."""
        ...

    def messages(self) -> list[Message]:
        """Every message of the conversation on its current branch, compacted away or not."""
        ...

    async def append(self, message: Message, entry_id: str | None = None) -> str:
        """Record `message` at the end; returns its entry id (`entry_id` when given: an
        assistant message keeps the id its chunks were streamed with, so a replay shows the
        same message ids).

        Raises:
            sessions.SessionWriteFailed, sessions.SessionBusy: it could not be recorded.
        """
        ...

    async def record_compaction(self, compaction: Compaction) -> None:
        """Make `history` start from the compaction.

        Raises:
            ValueError: `first_kept` is not a message of the conversation.
            sessions.SessionWriteFailed, sessions.SessionBusy: it could not be recorded.
        """
        ...

    async def record_shown(self, shown: Mapping[str, ToolUi]) -> None:
        """After a batch's results: how its calls were shown (diffs), for a later replay. Never
        raises: only the replay's diffs depend on it."""
        ...

    async def record_cancelled(self) -> None:
        """The turn was cancelled (by the user, or its front end went away): a replay marks it.
        Never raises: only the replay's mark depends on it."""
        ...

    async def open_turn(self) -> None:
        """Before a turn appends anything (a session answers the calls an earlier process left
        without results).

        Raises:
            sessions.SessionWriteFailed, sessions.SessionBusy: the answers could not be written.
        """
        ...


class InMemoryTranscript:
    """A transcript that lives in memory only (a subagent's): compacting keeps every message and
    starts the history from the preamble."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._joined: Memo = {}
        self._cut: tuple[Message, Message] | None = None
        """(the preamble as a user message, the first message kept)."""

    def history(self) -> list[Message]:
        # Results arrive one tool message each, as their calls finish: joined in call order, as
        # a session's history is (positions are list indexes: the list only grows).
        joined = join_results(self._messages, range(len(self._messages)), self._joined)
        if self._cut is None:
            return joined
        preamble, first_kept = self._cut
        for index, message in enumerate(joined):
            if message is first_kept:
                return [preamble, *joined[index:]]
        return joined

    def messages(self) -> list[Message]:
        return list(self._messages)

    async def append(self, message: Message, entry_id: str | None = None) -> str:
        self._messages.append(message)
        return entry_id or f"memory-{len(self._messages)}"

    async def record_compaction(self, compaction: Compaction) -> None:
        if all(message is not compaction.first_kept for message in self.history()):
            raise ValueError("the first kept message is not in the conversation")
        preamble = Message(role="user", parts=[TextPart(text=compaction.preamble)])
        self._cut = (preamble, compaction.first_kept)

    async def record_shown(self, shown: Mapping[str, ToolUi]) -> None:
        return None

    async def record_cancelled(self) -> None:
        return None

    async def open_turn(self) -> None:
        return None
