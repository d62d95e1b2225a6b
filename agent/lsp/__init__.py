"""Language servers for diagnostics after an edit.

- `jsonrpc`: JSON-RPC 2.0 with LSP framing on anyio streams (our own small client).
- `protocol`: the few messages built and read with `lsprotocol`'s types.
- `client`: one server process (`LanguageServer`): start, sync documents, get diagnostics.
- `manager`: a session's servers (`LspManager`) and `diagnostics_after_edit`, the call the
  edit tools make.

Nothing here loads before the first edit of a file some configured server checks.
"""
