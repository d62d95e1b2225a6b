"""The user's prompts on their way into a turn: the message a prompt becomes, the prompts queued
while a turn runs, and the session's title from the first one.

A prompt queued into a running turn is sent after the current tool batch, before the next model
call. Like the turn's first prompt it goes through the `user_prompt_submit` hooks first
(`admit`); the loop decides when (`agent.turn.loop`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final

from providers.types import ImagePart, Message, TextPart

if TYPE_CHECKING:
    from agent.turn.hooks import HookRunner
    from providers.catalog import ModelInfo

Prompt = str | Sequence[TextPart | ImagePart]
TITLE_LIMIT: Final = 60


class UnsupportedPrompt(ValueError):
    """The prompt cannot be sent to this model (e.g. an image for a model without vision).
    Raised by `run_turn` and `queue_prompt` before anything is appended."""


def prompt_message(prompt: Prompt, model_name: str, info: ModelInfo | None) -> Message:
    """The user message for `prompt`, refused when this model cannot take it: an image for a
    model the catalog knows has no vision. Unknown models get the benefit of the doubt.

    Raises:
        UnsupportedPrompt: empty, or an image this model cannot see.
    """
    parts: list[TextPart | ImagePart] = (
        [TextPart(text=prompt)] if isinstance(prompt, str) else list(prompt)
    )
    if not parts:
        raise UnsupportedPrompt("the prompt is empty")
    has_image = any(isinstance(part, ImagePart) for part in parts)
    if has_image and info is not None and info.in_catalog and not info.vision:
        raise UnsupportedPrompt(
            f"{model_name} does not accept images: remove the image or switch to a model with "
            "vision"
        )
    return Message(role="user", parts=parts)


def title_from(text: str) -> str | None:
    """A session title from a prompt: its first non-empty line, at most ~60 characters, cut at
    a word boundary."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = " ".join(line.split())
    if not line:
        return None
    if len(line) <= TITLE_LIMIT:
        return line
    cut = line[:TITLE_LIMIT]
    space = cut.rfind(" ")
    if space >= TITLE_LIMIT // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:") + "…"


class PromptInbox:
    """The session's prompts for the running turn (what `agent.turn.loop.Prompts` asks of it)."""

    def __init__(
        self,
        *,
        hooks: HookRunner | None,
        session_id: str,
        appended: Callable[[Message, str], Awaitable[None]],
    ) -> None:
        self._hooks = hooks
        self._session_id = session_id
        self._appended = appended
        self._queue: list[Message] = []
        self._accepting = False

    def open(self) -> None:
        """A turn starts: prompts may be queued into it."""
        self._accepting = True

    def queue(self, message: Message) -> bool:
        """Queue `message` into the running turn; False when it is not accepting any more (the
        caller starts a new turn with it)."""
        if not self._accepting:
            return False
        self._queue.append(message)
        return True

    def take(self) -> list[Message]:
        queued, self._queue = self._queue, []
        return queued

    def close(self) -> None:
        """The turn is ending: from now on prompts are refused rather than queued into it."""
        self._accepting = False

    async def admit(self, message: Message) -> str | None:
        """None when the prompt may go ahead; else why a hook blocked it."""
        if self._hooks is None:
            return None
        return await self._hooks.prompt_blocked(session_id=self._session_id, prompt=message.text)

    async def appended(self, message: Message, entry_id: str) -> None:
        """The prompt is in the transcript (the session titles itself from the first one)."""
        await self._appended(message, entry_id)
