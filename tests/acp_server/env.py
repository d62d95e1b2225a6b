"""Where a test's server runs: temporary XDG dirs, a workspace, and settings that select the
scripted model."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Json = dict[str, Any]


@dataclass
class AgentEnv:
    """Temp XDG dirs, a workspace, and the scripted model selected by the user settings."""

    root: Path
    workspace: Path
    config_home: Path
    data_home: Path
    extra_env: dict[str, str] = field(default_factory=lambda: {})
    over_websocket: bool = False
    """`open_agent` serves it through `earshot serve`'s WebSocket server instead of a socket
    pair (`tests/acp_server/websocket_client.py`)."""

    @property
    def settings_path(self) -> Path:
        return self.config_home / "earshot" / "settings.json"

    def write_settings(self, settings: Json) -> None:
        self.settings_path.parent.mkdir(parents=True, exist_ok=True)
        self.settings_path.write_text(json.dumps(settings), encoding="utf-8")

    def script(
        self,
        turns: list[Json],
        *,
        models: Json | None = None,
        mode: str | None = None,
        extra: Json | None = None,
    ) -> Path:
        """Select the scripted model playing `turns` (each process starts the script afresh)."""
        path = self.root / "script.json"
        path.write_text(json.dumps({"turns": turns}), encoding="utf-8")
        settings: Json = {
            "providers": {"scripted-test": {"api": "scripted", "script": str(path)}},
            "model": "scripted-test/anything",
        }
        if models is not None:
            settings["models"] = models
        if mode is not None:
            settings["mode"] = mode
        settings.update(extra or {})
        self.write_settings(settings)
        return path

    def environ(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.endswith(("_API_KEY", "_TOKEN")) and not key.startswith("EARSHOT_")
        }
        env.update(
            {
                "XDG_CONFIG_HOME": str(self.config_home),
                "XDG_DATA_HOME": str(self.data_home),
                "HOME": str(self.root / "home"),
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update(self.extra_env)
        return env


def make_env(tmp_path: Path) -> AgentEnv:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (tmp_path / "home").mkdir()
    return AgentEnv(
        root=tmp_path,
        workspace=workspace.resolve(),
        config_home=tmp_path / "config",
        data_home=tmp_path / "data",
    )


TAKES_CANCEL_REQUEST: Json = {"_meta": {"earshot": {"cancelRequest": True}}}
"""Says the client takes `$/cancel_request` (ACP v1 has no capability for it:
`acp_server.capabilities.CANCEL_REQUEST_CLIENTS`)."""
FULL_CAPABILITIES: Json = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    **TAKES_CANCEL_REQUEST,
}
