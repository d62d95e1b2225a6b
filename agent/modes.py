"""The permission modes: how much the agent may do without asking.

A module of its own, and a tiny one, because the settings (read before an editor's first
`session/new` is answered) need it and must not import the session machinery's I/O types.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

Mode: TypeAlias = Literal["plan", "ask", "accept-edits", "auto", "yolo"]
MODES: tuple[Mode, ...] = ("plan", "ask", "accept-edits", "auto", "yolo")
"""From the most restrictive to the most permissive."""
