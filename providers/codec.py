"""Lossless JSON (de)serialisation of the unified types, one TypeAdapter per union.

Adapters are built on first use: building them imports pydantic and compiles a schema, which
must stay off the start-up path.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from providers.types import JsonValue, Message, Part, StreamEvent


@cache
def _message_adapter() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(Message)


@cache
def _part_adapter() -> Any:
    from pydantic import Discriminator, TypeAdapter

    return TypeAdapter(Annotated[Part, Discriminator("kind")])


@cache
def _event_adapter() -> Any:
    from pydantic import Discriminator, TypeAdapter

    return TypeAdapter(Annotated[StreamEvent, Discriminator("kind")])


def warm_up() -> None:
    """Build the message adapter now, off the path of a session's first append (a front end
    calls this from a worker thread once a session is open; a first append that comes sooner
    builds it too, and one of the two is kept)."""
    _message_adapter()


def message_to_json(message: Message) -> dict[str, JsonValue]:
    """A JSON-ready dict of `message` (parts tagged by `kind`)."""
    return _message_adapter().dump_python(message, mode="json")


def message_from_json(data: object) -> Message:
    """Rebuild a `Message` from `message_to_json` output.

    Raises:
        pydantic.ValidationError: the data is not a message.
    """
    return _message_adapter().validate_python(data)


def part_to_json(part: Part) -> dict[str, JsonValue]:
    return _part_adapter().dump_python(part, mode="json")


def part_from_json(data: object) -> Part:
    return _part_adapter().validate_python(data)


def event_to_json(event: StreamEvent) -> dict[str, JsonValue]:
    return _event_adapter().dump_python(event, mode="json")


def event_from_json(data: object) -> StreamEvent:
    return _event_adapter().validate_python(data)
