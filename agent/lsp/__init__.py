"""Language servers for diagnostics after an edit.

- `jsonrpc`: JSON-RPC 2.0 with LSP framing on anyio streams (our own small client).
- `protocol`: the few messages built and read with `lsprotocol`'s types.
- `client`: one server process (`LanguageServer`): start, sync documents, get diagnostics.
- `manager`: a session's servers (`LspManager`) and `diagnostics_after_edit`, the call the
  edit tools make.

Nothing here loads before the first edit of a file some configured server checks.

See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.lsp.client import server_configs
    from agent.lsp.manager import LspManager

__all__ = [
    "LspManager",
    "server_configs",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "client": ("server_configs",),
            "manager": ("LspManager",),
        },
    )
