"""How clients nobody here wrote read what earshot sends, as data and small re-statements of
their code: Toad 0.6.20's type checks and keys, CodeCompanion's keys (both recorded in
`tests/data/clients/`, with the version and file they come from), and the few Zed functions a
user's keys and cards depend on (re-stated from Zed's source; each names its function)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, cast

Json = dict[str, Any]
DATA = Path(__file__).resolve().parents[1] / "data" / "clients"


@cache
def recorded(name: str) -> Json:
    data: Json = json.loads((DATA / name).read_text(encoding="utf-8"))
    return data


# ------------------------------------------------------------------------------------- Toad


def _toad_type_errors(value: Any, spec: Any, where: str) -> list[str]:
    types: Json = recorded("toad-0.6.20.json")["types"]
    if isinstance(spec, list):
        return [] if value in spec else [f"{where}: {value!r} is not one of {spec}"]
    alternatives = str(spec).split("|")
    if "null" in alternatives and value is None:
        return []
    errors: list[str] = []
    for alternative in (a for a in alternatives if a != "null"):
        found = _toad_one(value, alternative, types, where)
        if not found:
            return []
        errors.extend(found)
    return errors or [f"{where}: {value!r} is not {spec}"]


def _toad_one(value: Any, alternative: str, types: Json, where: str) -> list[str]:
    if alternative.endswith("[]"):
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__} is not a list"]
        errors: list[str] = []
        items = cast("list[Any]", value)
        for index, item in enumerate(items):
            errors += _toad_type_errors(item, alternative[:-2], f"{where}[{index}]")
        return errors
    simple: dict[str, type] = {
        "string": str,
        "object": dict,
        "array": list,
        "integer": int,
    }
    if alternative in simple:
        ok = isinstance(value, simple[alternative]) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {type(value).__name__} is not {alternative}"]
    definition = types[alternative]
    if isinstance(definition, list):
        return _toad_type_errors(value, definition, where)
    if "required" in definition:
        return _toad_dict_errors(value, definition, where)
    # A union of TypedDicts: the value must match one of them.
    attempts = [_toad_dict_errors(value, member, where) for member in definition.values()]
    return [] if any(not found for found in attempts) else min(attempts, key=len)


def _toad_dict_errors(value: Any, definition: Json, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: {type(value).__name__} is not an object"]
    errors: list[str] = []
    for key, spec in definition["required"].items():
        if key not in value:
            errors.append(f"{where}.{key}: missing")
        else:
            errors += _toad_type_errors(value[key], spec, f"{where}.{key}")
    for key, spec in definition["optional"].items():
        if key in value:
            errors += _toad_type_errors(value[key], spec, f"{where}.{key}")
    return errors


def toad_errors(message: Json) -> list[str]:
    """Why Toad 0.6.20 would refuse `message` (its params fail `check_type`, so it answers
    InvalidParams and drops it); [] when it takes it. Only what earshot's tool calls and
    permission prompts send is recorded."""
    params: Json = message.get("params") or {}
    method = message.get("method")
    if method == "session/update":
        update: Json = params["update"]
        name = {"tool_call": "ToolCall", "tool_call_update": "ToolCallUpdate"}.get(
            update["sessionUpdate"]
        )
        if name is None:
            return []
        return _toad_dict_errors(update, recorded("toad-0.6.20.json")["types"][name], "update")
    if method == "session/request_permission":
        types = recorded("toad-0.6.20.json")["types"]
        errors = _toad_dict_errors(
            params["toolCall"], types["ToolCallUpdatePermissionRequest"], "toolCall"
        )
        options: list[Json] = params["options"]
        for index, option in enumerate(options):
            errors += _toad_dict_errors(option, types["PermissionOption"], f"options[{index}]")
        return errors
    return []


def toad_key(options: list[Json], kind: str) -> Json | None:
    """The option Toad's key for `kind` answers: the first of that kind."""
    return next((option for option in options if option["kind"] == kind), None)


# ------------------------------------------------------------------------------ CodeCompanion


def codecompanion_key(options: list[Json], kind: str) -> Json | None:
    """The option CodeCompanion's key for `kind` answers (`build_kind_map`: the last)."""
    found = None
    for option in options:
        if option["kind"] == kind:
            found = option
    return found


def codecompanion_enter(options: list[Json]) -> Json | None:
    """The option Enter picks in CodeCompanion's `vim.fn.confirm(..., 2)`."""
    default = int(recorded("codecompanion.json")["default_choice"])
    return options[default - 1] if len(options) >= default else None


# -------------------------------------------------------------------------------------- Zed


def zed_key(options: list[Json], kind: str) -> Json | None:
    """`permission_option_for_action` (crates/agent_ui): the AllowAlways action takes the
    option whose id is exactly `allow_always` when there is one (Zed's own sandbox prompt),
    every action otherwise the first option of its kind."""
    if kind == "allow_always":
        exact = next((o for o in options if o["optionId"] == "allow_always"), None)
        if exact is not None:
            return exact
    return next((option for option in options if option["kind"] == kind), None)


def zed_hints(options: list[Json], *, allow_thread_special: bool) -> dict[str, Json]:
    """`render_permission_buttons_flat`: the key hint of each action sits on the first option
    of its kind that has an action (`reject_always` has none). One version gives an option
    whose id is `allow_thread` (and the sandbox fallback's `retry`) no action: its hint falls
    on the next of the kind."""
    actions = {"allow_once", "allow_always", "reject_once"}
    hinted: dict[str, Json] = {}
    for option in options:
        kind = option["kind"]
        if kind not in actions or kind in hinted:
            continue
        if allow_thread_special and option["optionId"] in ("allow_thread", "retry"):
            continue
        hinted[kind] = option
    return hinted


def assert_keys_do_what_they_say(options: list[Json]) -> None:
    """Every client's key for a kind answers the one option of that kind: at most one option
    per kind, Zed's AllowAlways key where its hint is (both Zed versions), and no option id
    that Zed reads specially."""
    kinds = [option["kind"] for option in options]
    assert len(set(kinds)) == len(kinds), kinds
    assert not {o["optionId"] for o in options} & {"allow_always", "allow_thread", "retry"}
    for special in (False, True):
        for kind, hinted in zed_hints(options, allow_thread_special=special).items():
            assert zed_key(options, kind) is hinted, (kind, options)
    for kind in set(kinds):
        assert toad_key(options, kind) is codecompanion_key(options, kind)
