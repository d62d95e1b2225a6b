"""One editor, either ACP version: what a feature test does and reads, said once for v1 and v2
(`Editor`), so that both versions run the same test. Every message is validated against its own
version's schema by the test client (`AcpClient.protocol`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.acp_server.client import WAIT_SECONDS, AcpClient, AgentEnv, Json, initialize, json_list
from tests.acp_server.client import initialize_v2 as initialize_v2

VERSIONS = (1, 2)


@dataclass
class Editor:
    client: AcpClient
    version: int

    async def start(self, capabilities: Json | None = None) -> Json:
        if self.version == 2:
            return await initialize_v2(self.client, capabilities)
        return await initialize(self.client, capabilities)

    async def new_session(self, env: AgentEnv) -> Json:
        params: Json = {"cwd": str(env.workspace)}
        if self.version == 1:
            params["mcpServers"] = []  # required in v1 only
        return await self.client.call("session/new", params)

    async def start_prompt(self, session_id: str, text: str) -> Any:
        """Send a prompt; its request id."""
        return await self.client.start_request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        )

    async def prompt(self, session_id: str, text: str) -> str:
        """Run a prompt to its end; the stop reason (v1: the answer's; v2: the idle update's,
        the answer being the inserted message's id)."""
        seen = len(self.idles(session_id))
        answer = await self.client.call(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        )
        if self.version == 1:
            return answer["stopReason"]
        assert isinstance(answer["messageId"], str)
        return await self.stopped(session_id, seen)

    async def stopped(self, session_id: str, seen: int) -> str:
        """v2: the stop reason of the first idle update after the `seen` first."""
        idles = await self.client.wait_for(
            lambda: (found := self.idles(session_id))[seen:] and found, WAIT_SECONDS
        )
        return idles[seen].get("stopReason")

    async def stop_of(self, session_id: str, prompt_id: Any, seen: int = 0) -> str:
        """The stop reason of a prompt sent with `start_prompt`."""
        response = await self.client.response(prompt_id)
        if self.version == 1:
            return response["result"]["stopReason"]
        assert "messageId" in response["result"], response
        return await self.stopped(session_id, seen)

    def idles(self, session_id: str) -> list[Json]:
        return [
            u
            for u in self.client.updates(session_id)
            if u["sessionUpdate"] == "state_update" and u["state"] == "idle"
        ]

    def calls(self, session_id: str) -> dict[str, Json]:
        """Each tool call as the client holds it: its updates merged in order (v1's `tool_call`
        and v2's first `tool_call_update` both create it)."""
        calls: dict[str, Json] = {}
        for update in self.client.updates(session_id):
            if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
                fields = {k: v for k, v in update.items() if k != "sessionUpdate"}
                calls.setdefault(update["toolCallId"], {}).update(fields)
        return calls

    def diffs(self, call: Json) -> list[tuple[str, str]]:
        """(path, what the diff says changed) of a call's diffs in either shape."""
        found: list[tuple[str, str]] = []
        for item in json_list(call.get("content")):
            if item["type"] != "diff":
                continue
            if self.version == 1:
                found.append((item["path"], item["newText"]))
            else:
                [change] = item["changes"]
                found.append((change["path"], item["patch"]["text"]))
        return found

    async def reopen(self, session_id: str, env: AgentEnv) -> Json:
        """The session opened again with its conversation replayed (v1 `session/load`, v2
        `session/resume` from the start)."""
        params: Json = {"sessionId": session_id, "cwd": str(env.workspace)}
        if self.version == 1:
            return await self.client.call("session/load", {**params, "mcpServers": []})
        return await self.client.call("session/resume", {**params, "replayFrom": {"type": "start"}})

    def user_text(self, session_id: str) -> str:
        kind = "user_message" if self.version == 2 else "user_message_chunk"
        return "".join(
            block["text"]
            for u in self.client.updates(session_id)
            if u["sessionUpdate"] == kind
            for block in (u["content"] if self.version == 2 else [u["content"]])
        )

    def options(self, answer: Json) -> dict[str, Json]:
        key = "configId" if self.version == 2 else "id"
        return {option[key]: option for option in answer["configOptions"]}

    async def set_option(self, session_id: str, config_id: str, value: str) -> Json:
        params: Json = {"sessionId": session_id, "configId": config_id, "value": value}
        if self.version == 2:
            params["type"] = "id"
        return await self.client.call("session/set_config_option", params)

    def permission_call(self, request: Json) -> Json:
        """The tool call a permission request is about."""
        params = request["params"]
        if self.version == 1:
            return params["toolCall"]
        assert params["subject"]["type"] == "tool_call"
        return params["subject"]["toolCall"]
