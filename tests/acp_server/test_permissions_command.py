"""`/permissions`, `/mode` and `/model` as an editor drives them (issue 17): an "always allow"
answer listed with its file and revoked (the next call asks again), a project rule in an
untrusted directory shown as ignored and never edited, and rules added from the editor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.acp_server.client import FULL_CAPABILITIES, AcpClient, AgentEnv, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call


async def command(client: AcpClient, session_id: str, text: str) -> tuple[str, dict[str, Any]]:
    """Run a slash command; its answer's text and `_meta.earshot`."""
    before = len(client.updates(session_id))
    result = await client.call("session/prompt", text_prompt(session_id, text))
    assert result["stopReason"] == "end_turn"
    chunks = [
        update
        for update in client.updates(session_id)[before:]
        if update["sessionUpdate"] == "agent_message_chunk"
    ]
    text_out = "".join(chunk["content"]["text"] for chunk in chunks)
    meta: dict[str, Any] = {}
    for chunk in chunks:
        meta.update(chunk.get("_meta", {}).get("earshot", {}))
    return text_out, meta


def choosing(*option_ids: str) -> Any:
    """A `session/request_permission` handler choosing `option_ids` in order."""
    remaining = list(option_ids)

    async def answer(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
        return {"outcome": {"outcome": "selected", "optionId": remaining.pop(0)}}

    return answer


def scope(meta: dict[str, Any], name: str) -> dict[str, Any]:
    return next(entry for entry in meta["permissions"]["scopes"] if entry["scope"] == name)


async def test_an_always_answer_is_listed_with_its_file_and_revoke_makes_the_next_call_ask(
    agent_env: AgentEnv,
) -> None:
    target = agent_env.workspace / "made"
    agent_env.script(
        [
            {"tool_calls": [bash_call(f"touch {target}", call_id="first")]},
            {"text": "made it"},
            {"tool_calls": [bash_call(f"touch {target}", call_id="second")]},
            {"text": "made it again"},
        ]
    )
    async with open_agent(agent_env) as client:
        # "Always reject" is the "always" answer a prompt saves to the project.
        client.handlers["session/request_permission"] = choosing("reject_always", "reject_once")
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "make it"))
        [asked] = client.requests_named("session/request_permission")
        always = next(o for o in asked["params"]["options"] if o["optionId"] == "reject_always")
        assert always["_meta"]["earshot"]["scope"] == "project"
        rule = always["_meta"]["earshot"]["rule"]

        text, meta = await command(client, session_id, "/permissions")
        remembered = scope(meta, "remembered")
        [listed] = [entry for entry in remembered["rules"] if entry["rule"] == rule]
        assert listed["list"] == "deny" and listed["applied"] and listed["revocable"]
        assert listed["answeredAt"].endswith("+00:00")  # when the answer was given
        projects = agent_env.config_home / "earshot" / "projects"
        assert remembered["file"].startswith(str(projects))
        assert remembered["modified"]
        assert rule in text and remembered["file"] in text
        builtin = scope(meta, "builtin")
        assert builtin["protectedNames"] == [".earshot", ".git"]

        text, meta = await command(client, session_id, f"/permissions revoke {rule}")
        assert f"Revoked `{rule}`" in text
        assert all(entry["rule"] != rule for entry in scope(meta, "remembered")["rules"])
        saved = json.loads(Path(remembered["file"]).read_text(encoding="utf-8"))
        assert rule not in saved.get("permissions", {}).get("deny", [])

        await client.call("session/prompt", text_prompt(session_id, "again"))
        asked_again = client.requests_named("session/request_permission")
        assert [a["params"]["toolCall"]["toolCallId"] for a in asked_again] == ["first", "second"]


async def test_a_project_rule_in_an_untrusted_directory_is_shown_ignored_and_never_edited(
    agent_env: AgentEnv,
) -> None:
    project = agent_env.workspace / ".earshot" / "settings.json"
    project.parent.mkdir()
    content = json.dumps({"permissions": {"allow": ["Bash(make *)"], "deny": ["Read(secret)"]}})
    project.write_text(content, encoding="utf-8")
    agent_env.script([{"text": "unused"}])
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        text, meta = await command(client, session_id, "/permissions")
        listed = scope(meta, "project")
        assert listed["trusted"] is False
        assert listed["file"] == str(project)
        rules = {(entry["list"], entry["rule"]): entry for entry in listed["rules"]}
        assert rules["allow", "Bash(make *)"]["applied"] is False
        assert rules["deny", "Read(secret)"]["applied"] is True
        assert rules["deny", "Read(secret)"]["revocable"] is False
        assert "NOT trusted" in text

        text, _ = await command(client, session_id, "/permissions revoke Read(secret)")
    assert "earshot does not edit it" in text
    assert project.read_text(encoding="utf-8") == content


async def test_rules_added_from_the_editor_apply_at_once_and_bad_ones_are_refused(
    agent_env: AgentEnv,
) -> None:
    target = agent_env.workspace / "made"
    agent_env.script(
        [{"tool_calls": [bash_call(f"touch {target}", call_id="touch")]}, {"text": "done"}]
    )
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        text, _ = await command(client, session_id, "/permissions allow Bash(")
        assert "Not a permission rule" in text
        text, meta = await command(client, session_id, "/permissions allow Bash(touch *)")
        assert "Added `Bash(touch *)`" in text
        [added] = scope(meta, "remembered")["rules"]
        assert (added["list"], added["rule"], added["applied"]) == ("allow", "Bash(touch *)", True)
        await client.call("session/prompt", text_prompt(session_id, "make it"))
    assert client.requests_named("session/request_permission") == []
    assert target.exists()


async def test_mode_and_model_without_an_argument_list_the_choices(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unused"}], models={"scripted-test/other": {"name": "Other"}})
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        text, _ = await command(client, session_id, "/mode")
        assert "Mode: ask." in text
        for mode in ("plan", "accept-edits", "auto", "yolo"):
            assert f"- {mode}\n" in text + "\n"
        text, _ = await command(client, session_id, "/model")
    assert "- scripted-test/anything (current)" in text
    assert "- scripted-test/other" in text


async def test_always_reject_saves_what_was_shown_and_revoke_takes_it_as_shown(
    agent_env: AgentEnv,
) -> None:
    """Issue 26.11: "always reject" on `ls && echo marker` saved `Bash(ls *)` (every `ls`
    refused from then on), and the rule as the option showed it was not found by revoke."""
    agent_env.script(
        [
            {"tool_calls": [bash_call("ls && echo marker", call_id="first")]},
            {"text": "refused"},
            {"tool_calls": [bash_call("ls", call_id="second")]},
            {"text": "listed"},
        ]
    )
    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = choosing("reject_always", "reject_once")
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "list"))
        [asked] = client.requests_named("session/request_permission")
        [always] = [o for o in asked["params"]["options"] if o["kind"] == "reject_always"]
        assert always["name"] == "Always reject `Bash(ls && echo marker)` in this project"
        await client.call("session/prompt", text_prompt(session_id, "list again"))
        # A plain `ls` is asked about, not refused by the rule.
        later = client.requests_named("session/request_permission")
        assert [a["params"]["toolCall"]["toolCallId"] for a in later] == ["first", "second"]

        shown = always["name"].split("`")[1]
        text, meta = await command(client, session_id, f"/permissions revoke {shown}")
        assert f"Revoked `{shown}`" in text
        assert scope(meta, "remembered")["rules"] == []
        # The whole option name pasted back, and several rules as an option joins them.
        await command(client, session_id, "/permissions deny Bash(ls *), Bash(echo *)")
        text, meta = await command(client, session_id, "/permissions deny Bash(ls *), Bash(echo *)")
        text, meta = await command(
            client, session_id, "/permissions revoke Always reject `Bash(ls *)`, `Bash(echo *)`"
        )
    assert "Revoked `Bash(ls *)`" in text and "Revoked `Bash(echo *)`" in text
    assert scope(meta, "remembered")["rules"] == []


async def test_the_listing_is_markdown_list_items_and_unknown_commands_list_the_commands(
    agent_env: AgentEnv,
) -> None:
    """Issues 26.8 and 26.17: plain lines ran together into one paragraph in Markdown clients;
    `/bogus` went to the model."""
    agent_env.script([])  # the model is never called
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await command(client, session_id, "/permissions allow Bash(make *)")
        text, _ = await command(client, session_id, "/permissions")
        bogus, _ = await command(client, session_id, "/bogus now")
        path, _ = await command(client, session_id, "/usr/bin/false fails, why?")
    lines = text.splitlines()
    for before, line in zip(["", *lines], lines, strict=False):
        # A bold heading alone in its paragraph, or a list item: nothing to run together.
        assert line == "" or line.startswith("- ") or (line.startswith("**") and before == "")
    assert any(line.startswith("- allow: `Bash(make *)`") for line in lines)
    assert bogus.startswith("Unknown command `/bogus`.")
    for name in ("compact", "undo", "permissions", "rewind", "fork"):
        assert f"\n- `/{name}`: " in bogus
    # A path is a prompt: it went to the model, whose script is empty.
    assert "Unknown command" not in path
