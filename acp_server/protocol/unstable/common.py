"""Unstable common: what is new or differs from `acp_server.protocol.common`.

Generated from acp_server/schema/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import TypeAlias

McpServerAcpId: TypeAlias = str
"""Unique identifier for an MCP server using the ACP transport."""
