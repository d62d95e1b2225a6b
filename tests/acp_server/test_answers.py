"""What the editor answers to our requests is checked at the boundary (`acp_server.answers`):
the shapes real clients send pass (with their extension members, and `null` for a result that
says nothing), and anything else takes the one error path, `InvalidAnswer` (a `ClientError`),
naming where the answer is wrong."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from acp_server.answers import InvalidAnswer, checked
from acp_server.jsonrpc import ClientError
from tests.acp_server.test_jsonrpc import connected

VALID: list[tuple[str, Any]] = [
    ("fs/read_text_file", {"content": "text", "_meta": {"x": 1}}),
    ("fs/write_text_file", {}),
    ("fs/write_text_file", None),
    ("terminal/kill", None),
    ("terminal/release", {"_meta": None}),
    ("session/request_permission", {"outcome": {"outcome": "cancelled"}}),
    ("session/request_permission", {"outcome": {"outcome": "selected", "optionId": "allow"}}),
    ("elicitation/create", {"action": "decline"}),
    ("elicitation/create", {"action": "accept", "content": {"a": "x", "b": ["y"], "c": 2.5}}),
    ("elicitation/create", {"action": "accept"}),
    ("elicitation/create", {"action": "someday"}),  # a future action: read as not accepted
    ("terminal/create", {"terminalId": "t1"}),
    ("terminal/output", {"output": "", "truncated": False}),
    ("terminal/output", {"output": "o", "truncated": True, "exitStatus": None}),
    ("terminal/output", {"output": "o", "truncated": False, "exitStatus": {"exitCode": 0}}),
    ("terminal/wait_for_exit", {"exitCode": None, "signal": "SIGKILL"}),
    ("terminal/wait_for_exit", {}),
]

INVALID: list[tuple[str, Any, str]] = [
    ("fs/read_text_file", {"content": 5}, "result.content"),
    ("fs/read_text_file", "text", "result"),
    ("fs/write_text_file", [], "result"),
    ("session/request_permission", {}, "result.outcome"),
    ("session/request_permission", {"outcome": {"outcome": "maybe"}}, "result.outcome.outcome"),
    ("session/request_permission", {"outcome": {"outcome": "selected"}}, "result.outcome.optionId"),
    ("elicitation/create", {"content": {}}, "result.action"),
    ("elicitation/create", {"action": "accept", "content": {"a": {"b": 1}}}, "result.content.a"),
    ("elicitation/create", {"action": "accept", "content": {"a": [1]}}, "result.content.a"),
    ("terminal/create", {"terminalId": None}, "result.terminalId"),
    ("terminal/output", {"truncated": False}, "result.output"),
    ("terminal/output", {"output": ""}, "result.truncated"),
    ("terminal/output", {"output": "", "truncated": False, "exitStatus": 1}, "result.exitStatus"),
    ("terminal/wait_for_exit", {"exitCode": True}, "result.exitCode"),
    ("terminal/wait_for_exit", {"exitCode": 1, "signal": 9}, "result.signal"),
]


@pytest.mark.parametrize(("method", "result"), VALID)
def test_answers_in_shape_pass_with_their_extension_members(method: str, result: Any) -> None:
    assert checked(method, result) == (result if result is not None else {})


@pytest.mark.parametrize(("method", "result", "where"), INVALID)
def test_an_answer_out_of_shape_is_a_client_error_naming_where(
    method: str, result: Any, where: str
) -> None:
    with pytest.raises(InvalidAnswer) as caught:
        checked(method, result)
    assert isinstance(caught.value, ClientError)
    assert caught.value.where == where and caught.value.method == method
    assert f"the answer does not validate: {where} " in str(caught.value)


def test_a_method_not_of_acp_is_returned_as_it_came() -> None:
    assert checked("x/custom", [1]) == [1]


async def test_the_connection_checks_each_answer_and_logs_one_that_fails() -> None:
    async with connected({}) as (connection, peer):
        logged: list[tuple[str, object]] = []

        def log(event: str, fields: Mapping[str, object], *, debug: bool = False) -> None:
            logged.append((event, dict(fields)))

        connection._log = log  # pyright: ignore[reportPrivateUsage]
        outcome: dict[str, object] = {}

        async def ask(path: str) -> None:
            try:
                outcome[path] = (
                    await connection.request("fs/read_text_file", {"sessionId": "s", "path": path})
                )["content"]
            except ClientError as exc:
                outcome[path] = exc

        with anyio.fail_after(5):
            async with anyio.create_task_group() as asks:
                asks.start_soon(ask, "/good")
                good = await peer.receive()
                asks.start_soon(ask, "/bad")
                bad = await peer.receive()
                peer.send({"jsonrpc": "2.0", "id": good["id"], "result": {"content": "ok"}})
                peer.send({"jsonrpc": "2.0", "id": bad["id"], "result": {"content": None}})
    assert outcome["/good"] == "ok"
    assert isinstance(outcome["/bad"], InvalidAnswer)
    assert logged == [
        ("an answer did not validate", {"method": "fs/read_text_file", "where": "result.content"})
    ]


def test_every_request_the_client_answers_has_a_check() -> None:
    from acp_server.answers import CHECKED_METHODS
    from acp_server.protocol import methods

    assert frozenset(methods.CLIENT_REQUESTS) == CHECKED_METHODS
