"""One open session's pickers: the mode, the model and the thought level, as `modes` and config
options (`acp_server.config` builds them), kept in step with the agent and with each other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_server.config import (
    ConfigState,
    config_options,
    parse_effort,
    parse_mode,
    setup_result,
)
from acp_server.errors import AuthRequired
from acp_server.framing import InvalidParams, shown

if TYPE_CHECKING:
    from acp_server.client_io import SessionChannel
    from acp_server.config import SetupResult
    from acp_server.ports import Workspace
    from acp_server.protocol.common import SessionConfigOption
    from agent.backends import Mode
    from agent.session import AgentSession


class SessionPickers:
    """What the client's pickers show for one session, and changes made through them."""

    def __init__(
        self, *, agent: AgentSession, channel: SessionChannel, workspace: Workspace
    ) -> None:
        self.agent = agent
        self.channel = channel
        self.workspace = workspace

    def state(self) -> ConfigState:
        info = self.agent.model_info
        return ConfigState(
            mode=self.agent.mode,
            model=self.agent.model_name,
            effort=self.agent.reasoning_effort,
            reasoning=bool(info is not None and info.reasoning),
            models=self.workspace.models(),
        )

    def options(self) -> list[SessionConfigOption]:
        return config_options(self.state())

    def setup_result(self) -> SetupResult:
        return setup_result(self.state())

    async def refresh_models(self) -> bool:
        """Ask the servers that list their own models (`Workspace.refresh_models`); True when
        the picker changed.

        Raises:
            Exception: the refresh failed (nothing changed).
        """
        return await self.workspace.refresh_models(self.agent.model_name)

    async def send_options(self) -> None:
        await self.channel.update(
            {"sessionUpdate": "config_option_update", "configOptions": self.options()}
        )

    async def send_mode(self) -> None:
        await self.channel.update(
            {"sessionUpdate": "current_mode_update", "currentModeId": self.agent.mode}
        )

    async def set_mode(self, mode: Mode) -> None:
        """A client-side mode change (set_mode or the mode option): tell the other picker."""
        await self.agent.set_mode(mode)
        await self.send_mode()
        await self.send_options()

    async def set_config_option(self, config_id: str, value: str) -> list[SessionConfigOption]:
        match config_id:
            case "mode":
                mode = parse_mode(value)
                if mode is None:
                    raise InvalidParams("value", f"invalid params: unknown mode {shown(value)}")
                await self.agent.set_mode(mode)
                await self.send_mode()
            case "model":
                if "/" not in value:
                    raise InvalidParams("value", "invalid params: a model is provider/model")
                await self.switch_model(value)
            case "thought_level":
                valid, effort = parse_effort(value)
                if not valid or not self.state().reasoning:
                    raise InvalidParams(
                        "value", f"invalid params: unknown thought level {shown(value)}"
                    )
                await self.agent.set_model(self.agent.model_name, effort)
            case _:
                raise InvalidParams(
                    "configId", f"invalid params: unknown config option {shown(config_id)}"
                )
        return self.options()

    async def switch_model(self, name: str) -> None:
        """Switch to a model the picker offers (or the current one).

        Raises:
            InvalidParams: the picker does not offer `name`.
            AuthRequired: its provider has no credentials.
        """
        known = {choice.name for choice in self.workspace.models()}
        if name not in known and name != self.agent.model_name:
            raise InvalidParams("value", f"invalid params: unknown model {shown(name)}")
        problem = self.workspace.check_credentials(name)
        if problem is not None:
            raise AuthRequired(problem)
        await self.agent.set_model(name, self.agent.reasoning_effort)
