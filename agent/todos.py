"""The todo list: the steps the model plans with the `todo` tool, shown to the user as it goes.

(ACP calls it a "plan", and so does the transcript's entry name; earshot says "todos" so the word
"plan" keeps one meaning, plan mode.) The list is persisted as an extension entry after each
change, so a resumed session shows it again and a compaction's preamble carries the open steps.

Each list has an id (ACP's `planId`): the id of the entry that started it, written when the
session had no list (none yet, or one the model emptied). The list keeps it through every
update; emptying it removes it, and the next list the model writes is a new plan with a new id.
Ids come from the transcript alone, so a replay or a resumed session finds the same ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from agent.events import TodoItem
from providers.types import JsonValue, Message, ToolCallPart
from sessions import Entry, ExtensionEntry, extensions

TODO_TOOL: Final = "todo"

_STATUSES: Final = ("pending", "in_progress", "completed")
_PRIORITIES: Final = ("high", "medium", "low")


def todos_to_json(items: Sequence[TodoItem]) -> list[JsonValue]:
    return [{"content": i.content, "status": i.status, "priority": i.priority} for i in items]


def todos_from_json(data: object) -> tuple[TodoItem, ...]:
    """A list from its persisted form (or the `todos` argument of a `todo` call); malformed
    items are skipped, unknown statuses and priorities fall back to the defaults."""
    if not isinstance(data, list):
        return ()
    items: list[TodoItem] = []
    for item in data:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(item, dict):
            continue
        content = item.get("content")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        status = item.get("status", "pending")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        priority = item.get("priority", "medium")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if not isinstance(content, str):
            continue
        if status not in _STATUSES:
            status = "pending"
        if priority not in _PRIORITIES:
            priority = "medium"
        items.append(TodoItem(content=content, status=status, priority=priority))
    return tuple(items)


@dataclass(frozen=True, slots=True)
class TodoPlan:
    """The todo list as one plan: its id and its steps (none: no plan)."""

    plan_id: str = ""
    items: tuple[TodoItem, ...] = ()

    def then(self, entry_id: str, items: tuple[TodoItem, ...]) -> TodoPlan:
        """The plan after the todos entry `entry_id` recorded `items`: the same plan while it
        has steps, a new one (this entry's id) when there was none."""
        return TodoPlan(self.plan_id if self.items else entry_id, items)


def latest_plan(entries: Sequence[Entry]) -> TodoPlan:
    """The plan as the todos entries in `entries` (a session's current path) left it."""
    plan = TodoPlan()
    for entry in entries:
        if isinstance(entry, ExtensionEntry) and entry.name == extensions.TODOS:
            plan = plan.then(entry.id, todos_from_json(entry.data))
    return plan


def todos_from_history(messages: Sequence[Message]) -> tuple[TodoItem, ...] | None:
    """The list the last `todo` call in `messages` set, or None when there was none."""
    for message in reversed(messages):
        if message.role != "assistant":
            continue
        for part in reversed(message.parts):
            if isinstance(part, ToolCallPart) and part.name == TODO_TOOL:
                arguments = part.arguments
                todos = arguments.get("todos") if isinstance(arguments, dict) else None
                if isinstance(todos, list):
                    return todos_from_json(todos)
    return None
