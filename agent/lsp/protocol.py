"""The few LSP messages a diagnostics client builds or reads, with `lsprotocol`'s types.

Imported by `agent.lsp.client` when a server starts: `lsprotocol.types` is a 0.2 s import.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agent.lsp.jsonrpc import Json

if TYPE_CHECKING:
    from cattrs import Converter
    from lsprotocol import types as lsp


@cache
def converter() -> Converter:
    from lsprotocol.converters import get_converter

    return get_converter()


def initialize_params(root: Path, options: Json) -> Json:
    """`initialize` for a client that only syncs whole documents and reads diagnostics."""
    import os

    from lsprotocol import types as lsp

    capabilities = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=False),
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=lsp.DiagnosticClientCapabilities(),
        ),
        workspace=lsp.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
        general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
    )
    params = lsp.InitializeParams(
        capabilities=capabilities,
        process_id=os.getpid(),
        client_info=lsp.ClientInfo(name="earshot"),
        root_uri=root.as_uri(),
        root_path=str(root),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options=options,
    )
    raw: dict[str, Any] = converter().unstructure(params)
    return raw


def pulled_diagnostics(raw: Json) -> list[lsp.Diagnostic]:
    """The items of a `textDocument/diagnostic` answer (a full report; an unchanged one, which
    this client never invites by sending a previous result id, has none)."""
    from lsprotocol import types as lsp

    if not isinstance(raw, dict) or cast("dict[str, Json]", raw).get("kind") != "full":
        return []
    report = converter().structure(raw, lsp.RelatedFullDocumentDiagnosticReport)
    return list(report.items)
