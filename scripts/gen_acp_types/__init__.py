"""Generate the typed ACP wire (`acp_server/protocol/`) from the vendored official schemas.

    .venv/bin/python -m scripts.gen_acp_types           # rewrite the generated modules
    .venv/bin/python -m scripts.gen_acp_types --check   # exit 1 if a committed module differs

Reads `acp_server/schema/schema.json` (stable) and `schema.unstable.json`, and the v2 draft's
`schema/v2/schema.json` and `schema.unstable.json` (into `protocol/v2/`), and writes TypedDicts,
type aliases and method tables (see `acp_server/protocol/__init__.py` for why TypedDicts and how
to use them). The mapping, in short:

- an object `$defs` entry is a `@final` TypedDict, its optional properties `NotRequired`;
- a union of objects (`oneOf`/`anyOf`, with or without a `discriminator`) is a type alias over
  one TypedDict per variant, each carrying its tag as a `Literal` and every field flattened in
  (no inheritance, so every class can be `@final` and pyright narrows on the tag or on `in`).
  A variant class is named `<Union><Tag>` (`SessionUpdateToolCall`), or `<Tag><Union>` when that
  name is already a `$defs` entry (`HttpMcpServer`, since `McpServerHttp` is the untagged body);
- properties and variants that combine (`allOf`, an object with its own properties and a union,
  a union inside a variant) are merged, the variant's fields overriding the base's;
- strings, numbers, `const`, closed and open enums are aliases (`Literal[...] | str` when the
  schema admits other strings); `_meta` and free-form objects are `JsonObject`, anything
  else untyped is `JsonValue`;
- `x-method` / `x-side` give each method's params and result types, read from the JSON-RPC
  envelopes (`ClientRequest`, `AgentResponse`, ...), which are not generated themselves;
- the leniency hints (`x-deserialize-*`) and defaults do not change a type.

The unstable schema is generated as a delta: only the definitions that differ from the stable
ones (or use one that does) are redefined in `unstable/`; the rest are imported. v2 is a family of
its own, generated whole (`v2/`, its unstable delta in `v2/unstable/`): it shares no type with v1.
A union with an alternative that admits any value (v2's `Error.data`) is an alias, not a class.

`model.py` reads a schema, `modules.py` writes the modules; their output goes through
`ruff check --select I --fix` and `ruff format`, so it is committed as is.
`tests/acp_server/test_protocol_types.py` fails if the committed modules are not what this
generator writes.
"""
