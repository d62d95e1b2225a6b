"""The generated ACP wire types (`acp_server/protocol/`): generated, faithful to the schema, and
strict enough to catch a wrong message."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import typing
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any, Protocol, cast

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from acp_server.protocol import methods
from scripts.gen_acp_types.model import Model, SchemaError
from scripts.gen_acp_types.modules import OUTPUT_DIR, SCHEMA_DIR, generate, method_area
from tests.acp_server.protocol_examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]


class _ErrorIterator(Protocol):
    def iter_errors(self, instance: Any) -> Iterator[ValidationError]: ...


@cache
def _schema(name: str = "schema.json") -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


def _errors(definition: str, value: object) -> list[str]:
    defs = _schema()["$defs"]
    validator = Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{definition}"})
    return [error.message for error in cast(_ErrorIterator, validator).iter_errors(value)]


def test_the_committed_modules_are_exactly_what_the_generator_writes() -> None:
    generated = generate()
    committed = {
        str(path.relative_to(OUTPUT_DIR)): path.read_text(encoding="utf-8")
        for path in OUTPUT_DIR.rglob("*.py")
        if path != OUTPUT_DIR / "__init__.py"  # hand-written: the design and the usage
    }
    assert sorted(committed) == sorted(generated)
    stale = [name for name, text in generated.items() if committed[name] != text]
    assert not stale, f"edited by hand or stale; run python -m scripts.gen_acp_types: {stale}"


@pytest.mark.parametrize(
    ("definition", "message"), EXAMPLES, ids=[f"{d}-{i}" for i, (d, _) in enumerate(EXAMPLES)]
)
def test_every_typed_example_validates_against_the_schema(
    definition: str, message: Mapping[str, object]
) -> None:
    assert _errors(definition, message) == []


def test_the_schema_rejects_what_the_server_sends_for_a_multiple_choice_question() -> None:
    """The examples are checked by a validator that can fail: this is what `client_io.py`
    sends for a multiple-choice question today (items without `"type": "string"`)."""
    params = {
        "sessionId": "sess_1",
        "mode": "form",
        "message": "Which files?",
        "requestedSchema": {
            "type": "object",
            "properties": {"answer": {"type": "array", "items": {"enum": ["a.py", "b.py"]}}},
        },
    }
    assert _errors("CreateElicitationRequest", params) != []


def test_the_method_tables_match_the_schema_method_maps() -> None:
    meta = json.loads((SCHEMA_DIR / "meta.json").read_text(encoding="utf-8"))
    agent = {**methods.AGENT_REQUESTS, **methods.AGENT_NOTIFICATIONS}
    client = {**methods.CLIENT_REQUESTS, **methods.CLIENT_NOTIFICATIONS}
    assert set(agent) == set(meta["agentMethods"].values())
    assert set(client) == set(meta["clientMethods"].values())
    assert set(methods.PROTOCOL_NOTIFICATIONS) == set(meta["protocolMethods"].values())
    defs = _schema()["$defs"]
    requests: list[tuple[str, Mapping[str, tuple[str, str]]]] = [
        ("agent", methods.AGENT_REQUESTS),
        ("client", methods.CLIENT_REQUESTS),
    ]
    notifications: list[tuple[str, Mapping[str, str]]] = [
        ("agent", methods.AGENT_NOTIFICATIONS),
        ("client", methods.CLIENT_NOTIFICATIONS),
        ("protocol", methods.PROTOCOL_NOTIFICATIONS),
    ]
    for side, table in requests:
        for method, (params, result) in table.items():
            assert (defs[params]["x-method"], defs[params]["x-side"]) == (method, side)
            assert (defs[result]["x-method"], defs[result]["x-side"]) == (method, side)
            assert params.endswith("Request") and result.endswith("Response")
    for side, table in notifications:
        for method, params in table.items():
            assert (defs[params]["x-method"], defs[params]["x-side"]) == (method, side)
            assert params.endswith("Notification")


def test_the_v2_method_tables_match_the_v2_schema() -> None:
    from acp_server.protocol.v2 import methods as v2_methods

    defs = _schema("v2/schema.json")["$defs"]
    declared = {d["x-method"] for d in defs.values() if "x-method" in d}
    tables: list[tuple[str, Mapping[str, tuple[str, str] | str]]] = [
        ("agent", {**v2_methods.AGENT_REQUESTS, **v2_methods.AGENT_NOTIFICATIONS}),
        ("client", {**v2_methods.CLIENT_REQUESTS, **v2_methods.CLIENT_NOTIFICATIONS}),
        ("protocol", v2_methods.PROTOCOL_NOTIFICATIONS),
    ]
    assert {method for _, table in tables for method in table} == declared
    assert {"tool_call/cancel", "terminal/cancel", "auth/login"} <= set(v2_methods.AGENT_REQUESTS)
    assert "session/load" not in v2_methods.AGENT_REQUESTS
    for side, table in tables:
        for method, names in table.items():
            for name in (names,) if isinstance(names, str) else names:
                assert (defs[name]["x-method"], defs[name]["x-side"]) == (method, side)


@pytest.mark.parametrize("family", ["", "v2."])
def test_each_typeddict_requires_exactly_what_the_schema_requires(family: str) -> None:
    """At run time too (`__required_keys__`): the annotations are evaluated, not strings."""
    checked = 0
    schema = _schema("v2/schema.json" if family else "schema.json")
    for module_name in ("common", "connection", "sessions", "prompt", "client", "elicitation"):
        module = importlib.import_module(f"acp_server.protocol.{family}{module_name}")
        for name, definition in schema["$defs"].items():
            if "properties" not in definition or {"anyOf", "oneOf"} & set(definition):
                continue
            cls = getattr(module, name, None)
            if cls is None:
                continue
            assert typing.is_typeddict(cls), name
            hints: Mapping[str, object] = cls.__annotations__
            assert set(hints) == set(definition["properties"]), name
            assert cls.__required_keys__ == frozenset(definition.get("required", [])), name
            checked += 1
    assert checked > 100


def test_importing_every_type_loads_nothing_but_typing() -> None:
    code = (
        "import sys; import acp_server.protocol.methods, acp_server.protocol.unstable.methods; "
        "import acp_server.protocol.v2.methods, acp_server.protocol.v2.unstable.methods; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('anyio', 'pydantic', 'jsonschema', 'structlog', 'agent', 'sessions', 'providers')"
        " or m.startswith('acp_server.') and not m.startswith('acp_server.protocol')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == "[]"


def test_the_generator_stops_on_a_method_it_cannot_place() -> None:
    schema = _schema()
    stray = {**schema["$defs"]["LogoutRequest"], "x-method": "frob/it"}
    with pytest.raises(SchemaError, match="FrobRequest: in no envelope"):
        Model({**schema, "$defs": {**schema["$defs"], "FrobRequest": stray}})
    with pytest.raises(SchemaError, match="'frob/it' has no area"):
        method_area("frob/it")


WRONG_MESSAGES = """
from acp_server.protocol.client import RequestPermissionRequest
from acp_server.protocol.common import ContentBlock, ToolCallUpdate
from acp_server.protocol.elicitation import CreateElicitationRequest
from acp_server.protocol.methods import AgentRequestHandlers, ClientRequestSender
from acp_server.protocol.prompt import PromptResponse, SessionNotification
from acp_server.protocol.sessions import NewSessionRequest, NewSessionResponse

async def new_session(params: NewSessionRequest) -> NewSessionResponse:
    return {"sessionId": params["cwd"]}

fine: NewSessionResponse = {"sessionId": "s", "modes": None, "_meta": {"a": [1, "b", None]}}
missing: NewSessionResponse = {"modes": None}  # wrong
misspelt: NewSessionResponse = {"sessionID": "s"}  # wrong
tag: SessionNotification = {  # wrong
    "sessionId": "s",
    "update": {"sessionUpdate": "agent_message", "content": {"type": "text", "text": "x"}},
}
block: ContentBlock = {"type": "text", "content": "x"}  # wrong
kind: ToolCallUpdate = {"toolCallId": "c", "kind": "write"}  # wrong
reason: PromptResponse = {"stopReason": "done"}  # wrong
option: RequestPermissionRequest = {  # wrong
    "sessionId": "s",
    "toolCall": {"toolCallId": "c"},
    "options": [{"optionId": "o", "name": "n", "kind": "allow_session"}],
}
question: CreateElicitationRequest = {  # wrong
    "sessionId": "s",
    "mode": "form",
    "message": "m",
    "requestedSchema": {
        "type": "object",
        "properties": {"answer": {"type": "array", "items": {"enum": ["a"]}}},
    },
}
handlers: AgentRequestHandlers = {"session/new": new_session}
swapped: AgentRequestHandlers = {"session/prompt": new_session}  # wrong

async def ask(send: ClientRequestSender) -> str:
    reply = await send("fs/read_text_file", {"sessionId": "s", "path": "/a"})
    await send("fs/read_text_file", {"sessionId": "s"})  # wrong
    return reply["content"]
"""


def test_pyright_rejects_wrong_messages_and_accepts_right_ones(tmp_path: Path) -> None:
    """Each statement marked `# wrong` has a type error, and nothing else has one."""
    source = tmp_path / "wrong_messages.py"
    source.write_text(WRONG_MESSAGES, encoding="utf-8")
    pyright = Path(sys.executable).parent / "pyright"
    result = subprocess.run(
        [str(pyright), "--outputjson", str(source)], capture_output=True, text=True, cwd=ROOT
    )
    report = json.loads(result.stdout)
    diagnostics: list[dict[str, Any]] = report["generalDiagnostics"]
    errors: list[int] = [
        d["range"]["start"]["line"] + 1 for d in diagnostics if d["severity"] == "error"
    ]
    lines = WRONG_MESSAGES.split("\n")
    wrong = [
        range(node.lineno, (node.end_lineno or node.lineno) + 1)
        for node in ast.walk(ast.parse(WRONG_MESSAGES))
        if isinstance(node, ast.stmt) and lines[node.lineno - 1].endswith("# wrong")
    ]
    assert len(wrong) == WRONG_MESSAGES.count("# wrong")
    unexpected = [lines[n - 1] for n in errors if not any(n in span for span in wrong)]
    missed = [lines[span.start - 1] for span in wrong if not any(n in span for n in errors)]
    assert not unexpected and not missed, (unexpected, missed)
