"""The todo list as ACP plans.

A client that advertised the unstable `plan` capability gets the list as a plan with an id
(`plan_update`, items form) and its end as `plan_removed`: the list's id is the agent's
(`agent.todos.TodoPlan`), so a list the model empties and starts again is a new plan, and a
rewind to a branch with another list removes the one shown. Every other client gets what it
always got: the whole list as a `plan` update, an empty list as an empty plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from agent.events import TodoItem, TodosChanged

if TYPE_CHECKING:
    from acp_server.protocol.prompt import SessionUpdate, SessionUpdatePlan
    from acp_server.protocol.unstable.prompt import (
        SessionUpdatePlanRemoved,
        SessionUpdatePlanUpdate,
    )

_FALLBACK_ID = "todos"
"""The id of a list an older event carries none for."""


def whole_plan(items: tuple[TodoItem, ...]) -> SessionUpdatePlan:
    """The todo list as ACP's stable `plan` update (the client replaces its whole plan)."""
    return {
        "sessionUpdate": "plan",
        "entries": [
            {"content": item.content, "priority": item.priority, "status": item.status}
            for item in items
        ],
    }


def plan_update(plan_id: str, items: tuple[TodoItem, ...]) -> SessionUpdate:
    update: SessionUpdatePlanUpdate = {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": plan_id, "entries": whole_plan(items)["entries"]},
    }
    return cast("SessionUpdate", update)


def plan_removed(plan_id: str) -> SessionUpdate:
    update: SessionUpdatePlanRemoved = {"sessionUpdate": "plan_removed", "planId": plan_id}
    return cast("SessionUpdate", update)


@dataclass(slots=True)
class PlanView:
    """What one session's client was shown of its plans (`plans`: it takes ids)."""

    plans: bool = False
    shown: str | None = None
    """The plan the client has (not removed since)."""

    def changed(self, event: TodosChanged) -> list[SessionUpdate]:
        if not self.plans:
            return [whole_plan(event.items)]
        plan_id = event.plan_id or _FALLBACK_ID
        updates: list[SessionUpdate] = []
        if self.shown is not None and (self.shown != plan_id or not event.items):
            updates.append(plan_removed(self.shown))
            self.shown = None
        if event.items:
            updates.append(plan_update(plan_id, event.items))
            self.shown = plan_id
        return updates


__all__ = ["PlanView", "plan_removed", "plan_update", "whole_plan"]
