"""`providers.records`: a record is its dataclass from its first use on, and nothing before."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import field
from typing import Any

import pytest
from pydantic import TypeAdapter

from providers import records
from providers.records import MutableRecord, Record


class Point(Record):
    x: int
    label: str = "p"
    tags: tuple[str, ...] = ()


class Counter(MutableRecord, kw_only=False):
    count: int = 0
    seen: list[str] = field(default_factory=lambda: [])


def test_a_record_is_a_frozen_keyword_only_dataclass() -> None:
    point = Point(x=1)
    assert point == Point(x=1, label="p") and point != Point(x=2)
    assert hash(point) == hash(Point(x=1))
    assert repr(point) == "Point(x=1, label='p', tags=())"
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(TypeError):
        Point(1)  # pyright: ignore[reportCallIssue]
    assert dataclasses.replace(point, x=3) == Point(x=3)
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "label", "tags"]


def test_a_mutable_record_takes_the_options_it_was_given() -> None:
    counter = Counter(2)
    counter.count += 1
    counter.seen.append("a")
    assert counter == Counter(3, ["a"])
    assert Counter().seen is not Counter().seen


def test_what_is_asked_of_the_class_alone_processes_it() -> None:
    class Lazy(Record):
        name: str
        size: int = 0

    assert "__dataclass_fields__" not in Lazy.__dict__  # nothing happened at definition
    parameters = inspect.signature(Lazy).parameters
    assert list(parameters) == ["name", "size"] and parameters["size"].default == 0
    assert dataclasses.is_dataclass(Lazy)

    class Validated(Record):
        size: int

    assert TypeAdapter(Validated).validate_python({"size": 3}) == Validated(size=3)


def test_a_record_cannot_build_on_another() -> None:
    with pytest.raises(TypeError, match="cannot subclass another record"):

        class Bigger(Point):  # pyright: ignore[reportUnusedClass]
            z: int = 0


def test_defining_records_runs_no_dataclass_machinery() -> None:
    code = (
        "import dataclasses, json\n"
        "calls = []\n"
        "real = dataclasses._process_class\n"
        "def counted(cls, *rest):\n"
        "    calls.append(cls.__name__)\n"
        "    return real(cls, *rest)\n"
        "dataclasses._process_class = counted\n"
        "import agent.events\n"
        "defined = list(calls)\n"
        "agent.events.TextChunk(text='x', message_id='m')\n"
        "print(json.dumps([defined, calls]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[[], ["TextChunk"]]'


def test_a_class_another_thread_is_processing_is_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The warm-up thread processes a record class while the loop's thread uses it: pydantic asks
    # `is_dataclass` (a lookup of `__dataclass_fields__`) and a turn makes an instance. Both wait
    # for the processing to end instead of seeing a half-made class (pydantic's
    # "schema-for-unknown-type" error ended a turn; an instance got `object.__init__`).
    class Racy(Record):
        value: int
        label: str = "x"

    inside, go = threading.Event(), threading.Event()
    real = dataclasses.dataclass

    def slow_dataclass(**options: bool) -> Callable[[type[Any]], type[Any]]:
        def apply(cls: type[Any]) -> type[Any]:
            inside.set()
            assert go.wait(10)
            return real(**options)(cls)

        return apply

    monkeypatch.setattr(records.dataclasses, "dataclass", slow_dataclass)
    seen: dict[str, object] = {}

    def process() -> None:
        seen["first"] = Racy(value=1)

    def use() -> None:
        seen["is_dataclass"] = dataclasses.is_dataclass(Racy)
        seen["second"] = Racy(value=2)

    first = threading.Thread(target=process)
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=use)
    second.start()
    # With the processing held, the other thread cannot finish (it waits); without the wait it
    # would finish at once, having seen the half-made class.
    second.join(0.5)
    assert second.is_alive()
    go.set()
    first.join(10)
    second.join(10)
    assert seen["is_dataclass"] is True
    assert seen["second"] == Racy(value=2, label="x")
    assert seen["first"] == Racy(value=1)
