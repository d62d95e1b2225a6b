"""The checkers the settings schema is built from (`agent.settings.schema`): each checks one JSON
value found at a key path, records its problems and returns the value converted. Strict: JSON types
are matched exactly (`true` is not a number, `"5"` is not an integer), unknown keys are rejected,
and a problem names the key path and what is wrong, never the value."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, TypeAlias, cast

Problem: TypeAlias = tuple[str, str]
"""`(dotted key path, what is wrong)`."""
Checker: TypeAlias = Callable[[object, str, list[Problem]], object]
"""Checks one JSON value found at a key path: records its problems (nested ones included) and
returns the value converted (a list, a dataclass...), or `INVALID` when it recorded any."""

INVALID: Final = object()
"""What a checker returns for a value it rejected (its problems are already recorded)."""


def key_path(path: str, key: str | int) -> str:
    return f"{path}.{key}" if path else str(key)


def string(value: object, path: str, problems: list[Problem]) -> object:
    if isinstance(value, str):
        return value
    problems.append((path, "must be a string"))
    return INVALID


def boolean(value: object, path: str, problems: list[Problem]) -> object:
    if isinstance(value, bool):
        return value
    problems.append((path, "must be true or false"))
    return INVALID


def positive_int(value: object, path: str, problems: list[Problem]) -> object:
    # bool is a subclass of int, and `true` is not a token count.
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    problems.append((path, "must be an integer greater than 0"))
    return INVALID


def _number(minimum: float, *, inclusive: bool) -> Checker:
    """A JSON number (integer or not, never `true`/`false`), as a float, at or above `minimum`."""
    bound = "greater than or equal to" if inclusive else "greater than"
    message = f"must be a number {bound} {minimum:g}"

    def check(value: object, path: str, problems: list[Problem]) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
            # NaN fails both comparisons, so it is rejected too.
            if number >= minimum if inclusive else number > minimum:
                return number
        problems.append((path, message))
        return INVALID

    return check


non_negative_float = _number(0, inclusive=True)
positive_float = _number(0, inclusive=False)


def absolute_path(value: object, path: str, problems: list[Problem]) -> object:
    """A string naming an absolute path, or one under the home directory (`~`, `~/...`)."""
    if isinstance(value, str) and (value.startswith("/") or value == "~" or value.startswith("~/")):
        return value
    problems.append((path, "must be an absolute path or start with ~/"))
    return INVALID


def any_json(value: object, path: str, problems: list[Problem]) -> object:
    """Any JSON value, kept as parsed (options passed through to a program)."""
    return value


def suffix(value: object, path: str, problems: list[Problem]) -> object:
    """A file suffix with its dot: `.py`."""
    if isinstance(value, str) and value.startswith(".") and len(value) > 1 and "/" not in value:
        return value
    problems.append((path, 'must be a file suffix starting with a dot, like ".py"'))
    return INVALID


def one_of(choices: Sequence[str]) -> Checker:
    """One of the given strings (the message lists them: they come from the code, not the file)."""
    message = "must be one of " + ", ".join(repr(choice) for choice in choices)

    def check(value: object, path: str, problems: list[Problem]) -> object:
        if isinstance(value, str) and value in choices:
            return value
        problems.append((path, message))
        return INVALID

    return check


def optional(check: Checker) -> Checker:
    """`null` or what `check` accepts."""

    def check_optional(value: object, path: str, problems: list[Problem]) -> object:
        return None if value is None else check(value, path, problems)

    return check_optional


def list_of(check: Checker) -> Checker:
    """A JSON array; each item is checked at `<path>.<index>`."""

    def check_list(value: object, path: str, problems: list[Problem]) -> object:
        if not isinstance(value, list):
            problems.append((path, "must be a list"))
            return INVALID
        known = len(problems)
        elements = cast("list[object]", value)
        items = [
            check(item, key_path(path, index), problems) for index, item in enumerate(elements)
        ]
        return items if len(problems) == known else INVALID

    return check_list


def map_of(check: Checker) -> Checker:
    """A JSON object with keys of the user's choosing; each value is checked at `<path>.<key>`."""

    def check_map(value: object, path: str, problems: list[Problem]) -> object:
        if not isinstance(value, dict):
            problems.append((path, "must be an object"))
            return INVALID
        known = len(problems)
        entries = cast("dict[str, object]", value)
        checked = {key: check(item, key_path(path, key), problems) for key, item in entries.items()}
        return checked if len(problems) == known else INVALID

    return check_map


class Field:
    """How one key of a schema object is read: its JSON name, the dataclass attribute it fills,
    its checker, and whether it must be present (otherwise the dataclass default applies)."""

    __slots__ = ("attribute", "check", "key", "required")

    def __init__(self, key: str, attribute: str, check: Checker, *, required: bool = False) -> None:
        self.key = key
        self.attribute = attribute
        self.check = check
        self.required = required


def schema_object(build: Callable[..., object], fields: Sequence[Field]) -> Checker:
    """A JSON object with exactly the keys in `fields`, built with `build(**attributes)`."""
    by_key = {spec.key: spec for spec in fields}

    def check_object(value: object, path: str, problems: list[Problem]) -> object:
        if not isinstance(value, dict):
            problems.append((path, "must be an object"))
            return INVALID
        known = len(problems)
        data = cast("dict[str, object]", value)
        attributes: dict[str, object] = {}
        for key, item in data.items():
            spec = by_key.get(key)
            if spec is None:
                problems.append((key_path(path, key), "unknown key"))
            else:
                attributes[spec.attribute] = spec.check(item, key_path(path, key), problems)
        problems.extend(
            (key_path(path, spec.key), "required key is missing")
            for spec in fields
            if spec.required and spec.key not in data
        )
        # Absent keys take the dataclass defaults.
        return build(**attributes) if len(problems) == known else INVALID

    return check_object
