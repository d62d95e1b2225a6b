"""The unstable ACP v2 surface (`v2/schema.unstable.json`): what it adds to v2.

Only what is new or differs from the v2 stable types is defined here, one module per area as in
the v2 package; a type not found here is the v2 stable one. `v2.unstable.methods` lists every
method, stable ones included, with the unstable types.

Generated from acp_server/schema/v2/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""
