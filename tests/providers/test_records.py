"""`providers.records`: a record is its dataclass from its first use on, and nothing before."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
from dataclasses import field

import pytest
from pydantic import TypeAdapter

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
