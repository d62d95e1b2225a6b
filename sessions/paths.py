"""Where earshot keeps its data."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """`$XDG_DATA_HOME/earshot`, or `~/.local/share/earshot` when unset or not absolute."""
    xdg = environ.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "earshot"
    home = environ.get("HOME")
    base = Path(home) if home else Path.home()
    return base / ".local" / "share" / "earshot"
