"""ACP v2 (the draft, `schema/v2/schema.json`): the typed wire of a v2 connection.

The same areas and mapping as the v1 package (`acp_server.protocol`), generated whole from the v2
schema: v2 renames and reshapes most messages (`info` and `capabilities` in `initialize`,
`tool_call_update` upserts, `state_update`, prompts answered with the inserted `messageId`), so
nothing is shared with v1. `v2.unstable` holds what `schema/v2/schema.unstable.json` adds.

Generated from acp_server/schema/v2/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""
