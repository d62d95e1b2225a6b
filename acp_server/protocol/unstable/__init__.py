"""The unstable ACP surface (`schema.unstable.json`): `session/fork`, `providers/*`.

Only what is new or differs from the stable types is defined here, one module per area as in
the stable package; a type not found here is the stable one. `unstable.methods` lists every
method, stable ones included, with the unstable types.

Generated from acp_server/schema/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""
