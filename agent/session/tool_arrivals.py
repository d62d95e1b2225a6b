"""Tools that join a session after it opened, and what the user should hear about them.

The composition root starts what offers them in the background (MCP servers:
`earshot.mcp_connections`), at once or when a front end calls `begin` (the ACP server, once it
has loaded what the first prompt needs), and hands the session a `ToolArrivals`
(`SessionOptions.tool_arrivals`). The session then:
- waits for `startup` at the start of its first turn, once; whoever gave it bounds it (a short
  budget: a slow server must not hold the turn);
- takes the tools that arrived at each model request boundary (never during a request), appended
  at the END of its tool list, in the order of their `rank` (a server's place in the
  configuration) when several arrived together: what the model saw before stays a prefix of what
  it sees now, so a provider's cached prompt prefix is not broken for them;
- says each notice once: in the running turn at once, else at the start of the next turn.

Nothing here knows what offers the tools: the agent knows no MCP.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from agent.events import AgentEvent, Notice
from agent.tools import AnyTool
from agent.turn import ToolSet


class ToolArrivals:
    """The producer (`add`, `say`) and the session (`settle`, `join`, `take_notices`) share it."""

    __slots__ = ("_begin", "_deliver", "_notices", "_startup", "_tools", "_watchers", "started")

    def __init__(
        self,
        startup: Callable[[], Awaitable[None]] | None = None,
        begin: Callable[[], None] | None = None,
    ) -> None:
        self._startup = startup
        self._begin = begin
        self._tools: list[tuple[int, int, AnyTool]] = []
        self._notices: list[Notice] = []
        self._deliver: Callable[[AgentEvent], bool] | None = None
        self._watchers: list[Callable[[], None]] = []
        self.started = startup is None
        """The first turn has stopped waiting for `startup`: a tool arriving now was missing
        from a request the model already got (its producer says so)."""

    # ------------------------------------------------------------------ the producer's side

    def add(self, tools: Sequence[AnyTool], *, rank: int = 0) -> None:
        """Offer `tools` from the next model request on (a name the session has is skipped).
        Watchers hear of it even when there are none: what else the producer offers (slash
        commands) may have changed."""
        for tool in tools:
            self._tools.append((rank, len(self._tools), tool))
        self._changed()

    def say(self, notice: Notice) -> None:
        """Tell the user once: in the running turn now, else at the start of the next one."""
        if self._deliver is None or not self._deliver(notice):
            self._notices.append(notice)
        self._changed()

    def watch(self, callback: Callable[[], None]) -> None:
        """Call `callback` after each arrival (a front end refreshing its command menu)."""
        self._watchers.append(callback)

    # ------------------------------------------------------------------ the front end's side

    def begin(self) -> None:
        """Start what offers the tools, if it waits to be told (once; `startup` starts it
        otherwise)."""
        begin, self._begin = self._begin, None
        if begin is not None:
            begin()

    # -------------------------------------------------------------------- the session's side

    def attach(self, deliver: Callable[[AgentEvent], bool]) -> None:
        """Where notices go while a turn runs: `deliver` says whether a turn took the event."""
        self._deliver = deliver

    async def settle(self) -> None:
        """The first turn's wait for `startup` (once; at once afterwards)."""
        startup, self._startup = self._startup, None
        try:
            if startup is not None:
                await startup()
        finally:
            self.started = True

    def join(self, tools: ToolSet) -> ToolSet | None:
        """`tools` with the arrivals appended (None when nothing arrived since the last call)."""
        if not self._tools:
            return None
        arrived = [tool for _, _, tool in sorted(self._tools, key=lambda item: item[:2])]
        self._tools = []
        return tools.extended(arrived)

    def take_notices(self) -> list[Notice]:
        notices, self._notices = self._notices, []
        return notices

    def _changed(self) -> None:
        for watcher in self._watchers:
            watcher()


__all__ = ["ToolArrivals"]
