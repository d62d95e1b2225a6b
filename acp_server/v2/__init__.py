"""ACP v2 (the draft, `schema/v2/`), served beside v1 from the same core.

A client asking for `protocolVersion: 2` (or a version we do not know) gets v2
(`acp_server.initialization.respond`); its requests go to `methods`, and each of its sessions
talks through a `channel.V2Channel`: the server's one translation of the core's events, sent in
v2's shapes (`convert`), with what v2 adds (the prompt's insertion, `state_update`, cancellable
calls). v2 has no client fs, terminal or modes: files are local, commands run locally in
terminals of earshot's own (`terminals`), and the mode is a config option. Nothing here loads
before a client asks for v2.
"""
