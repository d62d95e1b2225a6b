"""`Record`: a base for dataclasses whose methods are generated when first needed, not when the
class is defined.

Creating a dataclass runs `exec` for its `__init__`, `__repr__`, `__eq__` and, frozen, its
`__setattr__`: 0.3-1 ms a class, and the path to a session's answer defines over a hundred of
them (`agent.events` alone cost ~20 ms before anything ran). A `Record` subclass is processed by
`dataclasses.dataclass`, in place, the first time it is instantiated or anything asks it for an
attribute it does not have yet (`dataclasses.fields`, `is_dataclass`, `inspect.signature`, a
class pattern's `__match_args__`, pydantic's schema): from then on it is exactly that dataclass.
Most classes are never instantiated in a given run; those that are pay at first use, off the way
to a session's answer.

    class TextChunk(Record):                 # frozen, keyword-only, compared by value
        text: str
        message_id: str

    class ReadTracker(MutableRecord):
        seen: dict[Path, str] = field(default_factory=dict)

Differences with `@dataclass`, deliberate: no `slots` (slots need the class to be rebuilt, which
would leave the name already imported pointing at the old class), and a record may not subclass
another record (its fields would be read from the base before it is processed itself).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, cast, dataclass_transform

_OPTIONS = "__record_options__"
_processing = threading.RLock()
"""Two threads using a class for the first time at once: one processes it."""


_PROCESSING = "processing"

_defined: list[type[Any]] = []
"""Every record class defined so far (`unprocessed` filters those processed already)."""


@dataclass_transform(frozen_default=True, kw_only_default=True, eq_default=True)
class RecordMeta(type):
    frozen_default = True

    def __new__(
        mcls,
        name: str,
        bases: tuple[type, ...],
        namespace: dict[str, Any],
        *,
        frozen: bool | None = None,
        kw_only: bool = True,
        eq: bool = True,
    ) -> RecordMeta:
        if any(isinstance(base, RecordMeta) and base.__module__ != __name__ for base in bases):
            raise TypeError(f"{name}: a record cannot subclass another record")
        if namespace.get("__module__") == __name__:  # `Record` and `MutableRecord` themselves
            return super().__new__(mcls, name, bases, namespace)
        frozen = mcls.frozen_default if frozen is None else frozen
        namespace[_OPTIONS] = {"frozen": frozen, "kw_only": kw_only, "eq": eq}
        created = super().__new__(mcls, name, bases, namespace)
        _defined.append(created)
        return created

    def __getattr__(cls, name: str) -> Any:
        # Only reached for an attribute the class does not have: process it, then look again.
        if name.startswith("__"):
            options = cls.__dict__.get(_OPTIONS)
            if isinstance(options, dict):
                realise(cls)
                return getattr(cls, name)
            if options == _PROCESSING:
                # Being processed: by another thread (pydantic's `is_dataclass` on the loop while
                # the warm-up thread processes the class), whose end this waits for; or by this
                # one (a lookup of `dataclass` itself), which the reentrant lock lets through.
                with _processing:
                    if cls.__dict__.get(_OPTIONS) is None:
                        return getattr(cls, name)
        raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")


@dataclass_transform(frozen_default=False, kw_only_default=True, eq_default=True)
class MutableRecordMeta(RecordMeta):
    """`RecordMeta` for mutable records (type checkers read the defaults from here)."""

    frozen_default = False


def _first_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """A record class's `__init__` until it is processed (its base's): process it (or wait for
    the thread processing it), then run the dataclass's. It is the base's, not the class's own,
    so the class never lacks one: `dataclass` adds the real one to the class itself, and a
    thread making an instance meanwhile comes here and waits."""
    cls = cast("type[Any]", type(self))
    realise(cls)
    init: Any = cls.__dict__.get("__init__")
    if init is None:  # only while this very thread is processing the class
        raise TypeError(f"{cls.__name__} is being processed: no instance can be made yet")
    init(self, *args, **kwargs)


class Record(metaclass=RecordMeta):
    """Base of the lazily processed, frozen dataclasses (see the module docstring)."""

    __init__ = _first_init


class MutableRecord(metaclass=MutableRecordMeta):
    """Base of the lazily processed dataclasses whose fields can be set."""

    __init__ = _first_init


def realise(cls: type[Any]) -> type[Any]:
    """Make `cls` the dataclass it declares now (nothing when it already is)."""
    if cls.__dict__.get(_OPTIONS) is None:
        return cls
    with _processing:
        options = cls.__dict__.get(_OPTIONS)
        if not isinstance(options, dict):
            return cls  # done, or being done by this thread (a lookup while processing)
        flags = cast("dict[str, bool]", options)
        type.__setattr__(cls, _OPTIONS, _PROCESSING)
        dataclasses.dataclass(frozen=flags["frozen"], kw_only=flags["kw_only"], eq=flags["eq"])(cls)
        type.__setattr__(cls, _OPTIONS, None)
    return cls


def unprocessed() -> list[type[Any]]:
    """The record classes defined so far that were not processed yet: what a front end may
    `realise` ahead of use (one at a time, on the thread that uses them), when it has nothing
    better to do, so that the first turn does not pay for them."""
    return [cls for cls in _defined if isinstance(cls.__dict__.get(_OPTIONS), dict)]
