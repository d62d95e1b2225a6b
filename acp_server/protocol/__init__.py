"""The ACP wire, typed: TypedDicts generated from the official schema (`acp_server/schema/`).

Every module here but this one is written by `python -m scripts.gen_acp_types` from the vendored
`schema.json` / `schema.unstable.json`; a test fails if one differs from what the script writes,
so change the generator (or the schema), never the output. This package imports nothing.

- `common`: ids, content blocks, tool calls, config options, `Error`, `JsonValue`/`JsonObject`.
- `connection`: `initialize`, `authenticate`, `logout`; capabilities, auth methods.
- `sessions`: `session/new|load|resume|list|delete|close|set_mode|set_config_option`, MCP servers.
- `prompt`: `session/prompt`, `session/cancel`, `session/update` (`SessionUpdate`, its variants).
- `client`: what the client answers: `session/request_permission`, `fs/*`, `terminal/*`.
- `elicitation`: `elicitation/create`, `elicitation/complete`.
- `methods`: per method, the `$defs` names of its params and result (`AGENT_REQUESTS`,
  `CLIENT_REQUESTS`, `*_NOTIFICATIONS`: for a validator), and for typed code the handler tables
  (`AgentRequestHandlers`, ...) and the senders whose result type follows the method
  (`ClientRequestSender`, ...).
- `unstable`: only what `schema.unstable.json` adds or changes (`session/fork`, `providers/*`,
  `systemPrompt`, ...), same areas; `unstable.methods` covers every method with those types.
- `v2`: the ACP v2 draft (`schema/v2/schema.json`), the same areas generated whole (v2 reshapes
  most messages, so nothing is shared with v1: `acp_server.protocol.v2.prompt.SessionUpdate` is
  v2's), and `v2.unstable` what `schema/v2/schema.unstable.json` adds. Used by `acp_server.v2`.

Why TypedDicts, not pydantic (the project's validation library) or msgspec models:
- Start-up. Imported under `TYPE_CHECKING` they cost nothing, and a handler needs nothing else:
  a TypedDict is a plain dict at run time. Imported for real, all the stable types and tables
  take about 6 ms (`acp_server.protocol.methods`, cached bytecode; 15 ms where bytecode is not
  cached, as in this sandbox), the unstable ones 10 ms. pydantic takes 40 ms or more to import
  and about 170 ms to build 250 small models on the same machine; msgspec would be a new
  dependency whose structs are not the dicts the transport reads and writes.
- pyright. Dict literals are checked key by key (a missing, misspelt or extra key, a wrong tag);
  tagged unions narrow on their tag (`match update["sessionUpdate"]`), and since every class is
  `@final`, on `in` too (`"type" in server` tells `HttpMcpServer | SseMcpServer` from
  `McpServerStdio`). Handler tables and senders check params and results per method.
- No conversion: the JSON that arrives is the value handlers read, and what they return is
  written as is.
- No `ReadOnly`: it would need `typing_extensions` at run time (3.11 has no `typing.ReadOnly`),
  and its one gain, covariant fields, is not needed: variants are flattened, and a variant is
  assignable to the type it extends (`ContentBlockText` to `TextContent`) as it is.
Types do not validate: a message from the client is validated once at the edge (against the
schema definition `methods` names) and only then treated as its TypedDict.

The mapping: keys are the wire's (`sessionId`, `_meta`); an optional field is `NotRequired`, a
nullable one `| None`; `_meta` and other free objects are `JsonObject`, untyped values
`JsonValue`. A union of objects is an alias over one class per variant with its tag as a
`Literal` and all its fields (`SessionUpdateToolCall`, or `HttpMcpServer` where `McpServerHttp`
names the untagged body). Where the schema admits tags it does not list, the union has an
`...Other` variant whose tag is `str`: match it with a mapping pattern
(`case {"action": "accept", "content": content}:`) and treat the rest as unknown. Open string
enums are `Literal[...] | str`.

Usage: import the types under `TYPE_CHECKING`, never on the path to the `initialize` reply.

    from __future__ import annotations

    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        from acp_server.protocol.methods import AgentRequestHandlers, ClientRequestSender
        from acp_server.protocol.sessions import NewSessionRequest, NewSessionResponse


    async def new_session(params: NewSessionRequest) -> NewSessionResponse:
        roots = [params["cwd"], *params.get("additionalDirectories", [])]
        commands = [s["command"] for s in params["mcpServers"] if "type" not in s]  # stdio
        session = await open_session(roots, commands)
        # A missing or misspelt key, or a wrong value, is a pyright error here.
        return {"sessionId": session.id, "modes": session.modes}


    HANDLERS: AgentRequestHandlers = {"session/new": new_session}  # checked per method


    async def read(send: ClientRequestSender, session_id: str, path: str) -> str:
        reply = await send("fs/read_text_file", {"sessionId": session_id, "path": path})
        return reply["content"]  # the reply is a ReadTextFileResponse

`tests/acp_server/protocol_examples.py` holds this code checked by pyright, a dispatcher, and
typed samples of the messages the server sends today, each validated against the schema.
"""
