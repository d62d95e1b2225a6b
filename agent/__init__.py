"""The agent core: sessions, the turn loop, tools, permissions, context shaping, undo and hooks.

It lives in rooms (subpackages: `agent.session`, `agent.turn`, `agent.permissions`, ...), each
with an `AGENTS.md` saying what it owns, and its shared vocabulary (events, modes, backends,
protected paths, the network, the session's block of tasks, the tool environment, the
transcript, todos) at the top. A room's
`__init__` is its face: the names other rooms and packages use, listed in `__all__` and loaded
lazily (`lazy_face`): importing a room loads none of its modules, and a name loads only its own
module (with what that module imports).
ARCHITECTURE.md ("The rooms of agent/") draws the arrows between them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence


def lazy_face(room: str, homes: Mapping[str, Sequence[str]]) -> Callable[[str], object]:
    """A room's module `__getattr__`: `homes` maps each of the room's modules to the names its
    face offers from it, and a name is imported from its module when it is first asked for.
    (The face imports the same names under `TYPE_CHECKING` for the type checker.)"""
    module_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> object:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {room!r} has no attribute {name!r}")
        # `__import__`, not `importlib.import_module`: the builtin is the import statement's own
        # path, which `-X importtime` reports (the start-up tests read it).
        return getattr(__import__(f"{room}.{module}", fromlist=[name]), name)

    return __getattr__
