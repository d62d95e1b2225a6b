"""MCP permission rules match the server names as configured: no rewriting may merge two names
or move a rule off the server it was written for (issue 12, item 6). Attacks first, against the
real demo server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acp_server.ports import McpStdioServer
from agent.backends import Mode
from agent.events import ToolCallFinished
from agent.permissions import PermissionRules, decide
from agent.tools import PermissionRequest
from earshot.mcp_tools import StdioServer, ambiguous_servers, tool_name
from tests.earshot.support import DEMO_SERVER, Env, make_env
from tests.earshot.test_mcp import offered, results, run_turn, script, session_with

ROOT = Path("/work/project")


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def mcp(server: str, tool: str) -> PermissionRequest:
    return PermissionRequest(
        rule_tool=f"mcp__{server}__{tool}", description="call", mcp_server=server
    )


def outcome(request: PermissionRequest, mode: Mode, lists: dict[str, tuple[str, ...]]) -> str:
    rules = PermissionRules.parse(
        allow=lists.get("allow", ()), ask=lists.get("ask", ()), deny=lists.get("deny", ())
    )
    return decide(rules, mode, request, read_only=False, roots=[ROOT]).outcome


@pytest.mark.parametrize(
    ("request_", "lists", "mode", "expected"),
    [
        # `allow mcp__a` is for the server `a`, not `a_`, `a-`, `ab` or `a__b`.
        (mcp("a_", "shout"), {"allow": ("mcp__a",)}, "ask", "ask"),
        (mcp("ab", "shout"), {"allow": ("mcp__a",)}, "ask", "ask"),
        (mcp("a__b", "shout"), {"allow": ("mcp__a",)}, "ask", "ask"),
        (mcp("a", "shout"), {"allow": ("mcp__a",)}, "ask", "allow"),
        (mcp("a_", "shout"), {"allow": ("mcp__a__*",)}, "ask", "ask"),
        (mcp("a", "shout"), {"allow": ("mcp__a__*",)}, "ask", "allow"),
        (mcp("a", "shout"), {"allow": ("mcp__a__shout",)}, "ask", "allow"),
        (mcp("a", "shout_x"), {"allow": ("mcp__a__shout",)}, "ask", "ask"),
        # A deny rule written for the server `a__b` covers it, in every mode.
        (mcp("a__b", "shout"), {"deny": ("mcp__a__b",)}, "yolo", "deny"),
        (mcp("a__b", "shout"), {"deny": ("mcp__a__b__shout",)}, "yolo", "deny"),
        (mcp("a__b", "add"), {"deny": ("mcp__a__b__shout",)}, "yolo", "allow"),
        (mcp("a_", "shout"), {"deny": ("mcp__a_",)}, "yolo", "deny"),
        (mcp("a", "shout"), {"deny": ("mcp__a_",)}, "yolo", "allow"),
        (mcp("my server", "do.it"), {"deny": ("mcp__*",)}, "yolo", "deny"),
    ],
)
def test_rules_match_the_configured_names_exactly(
    request_: PermissionRequest, lists: dict[str, tuple[str, ...]], mode: Mode, expected: str
) -> None:
    assert outcome(request_, mode, lists) == expected


def test_model_facing_names_keep_names_apart() -> None:
    assert tool_name("a", "t") != tool_name("a_", "t")
    assert tool_name("a__b", "t") == "mcp__a__b__t"
    assert tool_name("my server", "do.it") == "mcp__my_server__do_it"
    assert len(tool_name("s" * 80, "t" * 80)) == 64


def test_names_that_make_rules_ambiguous_are_refused() -> None:
    def server(name: str) -> StdioServer:
        return StdioServer(name=name, command="true")

    refused = ambiguous_servers([server("a"), server("a__b"), server("a_"), server("x*")])
    assert [failure.server for failure in refused] == ["a__b", "x*"]
    assert "ambiguous with the server 'a'" in refused[0].notice
    assert ambiguous_servers([server("a__b"), server("c")]) == []


def demo(name: str) -> McpStdioServer:
    return McpStdioServer(name=name, command=sys.executable, args=(str(DEMO_SERVER),))


async def test_an_allow_rule_for_one_server_does_not_cover_a_look_alike(env: Env) -> None:
    env.write_settings({"permissions": {"allow": ["mcp__a"]}})
    model = script(("mcp__a__shout", {"text": "one"}), ("mcp__a___shout", {"text": "two"}))
    async with session_with(env, model, [demo("a"), demo("a_")]) as session:
        events = await run_turn(session)
    assert {"mcp__a__shout", "mcp__a___shout"} <= set(offered(model))
    status = {e.call_id: e.status for e in events if isinstance(e, ToolCallFinished)}
    assert status == {"call_0": "completed", "call_1": "denied"}
    assert results(model)["call_0"].text == "ONE"


async def test_a_deny_rule_reaches_a_server_whose_name_has_double_underscores(env: Env) -> None:
    env.write_settings({"mode": "yolo", "permissions": {"deny": ["mcp__a__b"]}})
    # `add` is read-only (no prompt), `shout` is not: the rule reaches both.
    model = script(("mcp__a__b__add", {"a": 1, "b": 2}), ("mcp__a__b__shout", {"text": "x"}))
    async with session_with(env, model, [demo("a__b")]) as session:
        events = await run_turn(session)
    status = {e.call_id: e.status for e in events if isinstance(e, ToolCallFinished)}
    assert status == {"call_0": "denied", "call_1": "denied"}


async def test_colliding_names_are_refused_and_said(env: Env) -> None:
    model = script(("mcp__a__add", {"a": 1, "b": 2}))
    async with session_with(env, model, [demo("a"), demo("a__b")]) as session:
        events = await run_turn(session)
        assert not any(name.startswith("mcp__a__b__") for name in session.tools)
    notices = [e.message for e in events if e.kind == "notice"]
    assert any("MCP server 'a__b' is not available" in n and "rename" in n for n in notices)
    assert results(model)["call_0"].text == "3"


async def test_tools_whose_model_names_coincide_get_distinct_names(env: Env) -> None:
    env.write_settings({"permissions": {"allow": ["mcp__a.b"]}})
    model = script(("mcp__a_b__add", {"a": 1, "b": 2}))
    async with session_with(env, model, [demo("a.b"), demo("a_b")]) as session:
        await run_turn(session)
        adds = sorted(name for name in session.tools if name.endswith("__add") or "_add_" in name)
        # The server configured first keeps the plain names, whichever starts first.
        assert len(adds) == 2 and "mcp__a_b__add" in adds
        assert session.tools["mcp__a_b__add"].description.startswith("[MCP server 'a.b']")
        shouts = [session.tools[n] for n in session.tools if "shout" in n]
        requests = {
            tool.permission(tool.input_model.model_validate({"text": "x"}), None)  # pyright: ignore[reportOptionalCall, reportArgumentType]
            for tool in shouts
        }
    assert {(r.mcp_server, r.rule_tool) for r in requests} == {
        ("a.b", "mcp__a.b__shout"),
        ("a_b", "mcp__a_b__shout"),
    }
