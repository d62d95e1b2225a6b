"""Edits that check themselves: LSP diagnostics after each edit, the verify loop after a batch.

`EditChecks` belongs to a session (built from `Settings.code`); the executor calls it around
every successful `edit`/`write` (`PermissionRequest.is_file_edit`) and once more after the last
edit of a batch, and appends what it says to that call's tool result, so the model sees a broken
edit in the same step. Nothing is said about a clean edit.

- LSP (`agent.lsp`): the old text of each edited file a configured server checks is read before
  the edit, the new one after; `LspManager.diagnostics_after_edit` reports only what the edit
  introduced. The servers start at the first edit that needs them and stay for the session,
  in the session's block (`agent.tasks.SessionTasks`: their reader tasks need a task group that
  outlives the turns); closing the session stops them.
- Verify (`agent.code.verify`): the configured commands whose globs match the batch's files run
  through the same permission gate as `bash` (a `Bash` request for the command line) and in the
  same sandbox. The gate's verdict is remembered per configured command for the session, so
  the user is never asked twice for the same one; a refused command is skipped and said once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio

from agent.backends import FileBackend, ToolUi, command_title
from agent.settings import CodeConfig
from agent.tasks import Held, SessionTasks
from agent.tools import PermissionRequest
from providers.logs import get_logger

if TYPE_CHECKING:
    from agent.code.verify import CommandResult
    from agent.lsp import LspManager
    from agent.sandbox import Sandbox
    from agent.turn import Tooling

_log = get_logger(__name__)

OUTPUT_LIMIT: Final = 200_000
"""Bytes of a verify command's output kept (trimmed to the touched files afterwards)."""


@dataclass(slots=True)
class EditChecks:
    """A session's LSP servers and verify commands (see the module docstring)."""

    code: CodeConfig
    root: Path
    tasks: SessionTasks
    sandbox: Sandbox | None = None
    _verdicts: dict[str, bool] = field(default_factory=lambda: {})
    """The gate's verdict per configured verify command (its template), for the session."""
    _lsp: Held[LspManager] | None = None
    """The language servers, held in the session's block."""
    _starting: anyio.Lock = field(default_factory=anyio.Lock)

    @property
    def enabled(self) -> bool:
        return bool(self.code.verify or self.code.lsp)

    def server_pids(self) -> dict[str, int | None]:
        """The language servers running, by name (their process ids)."""
        if self._lsp is None:
            return {}
        return {name: server.pid for name, server in self._lsp.value.running().items()}

    def _checked_by_a_server(self, path: Path) -> bool:
        suffix = path.suffix.lower()
        return any(
            suffix in (extension.lower() for extension in entry.extensions)
            for entry in self.code.lsp.values()
        )

    async def _manager(self) -> LspManager:
        """The session's language servers, held in the session's block (started at the first
        edit a server checks; each server starts at the first edit of its files)."""
        if self._lsp is not None:
            return self._lsp.value
        async with self._starting:
            if self._lsp is None:
                # Only a session with `lsp` settings pays for the client (and lsprotocol).
                from agent.lsp import LspManager, server_configs

                sandbox = self.sandbox
                confinement = sandbox if sandbox is not None and sandbox.active else None
                manager = LspManager(
                    server_configs(self.code.lsp), self.root, confinement=confinement
                )
                self._lsp = await self.tasks.enter(manager)
        assert self._lsp is not None
        return self._lsp.value

    async def aclose(self) -> None:
        """Stop the language servers (before the sandbox they run in is taken down)."""
        held, self._lsp = self._lsp, None
        if held is not None:
            await held.aclose()

    async def before_edit(self, paths: Sequence[Path], files: FileBackend) -> dict[Path, str]:
        """The current text of each path a language server checks (absent file: empty)."""
        texts: dict[Path, str] = {}
        for path in paths:
            if self._checked_by_a_server(path):
                texts[path] = await _read(files, path)
        return texts

    async def after_edit(self, before: dict[Path, str], files: FileBackend) -> str | None:
        """What the language servers say the edit introduced, or None."""
        if not before:
            return None
        manager = await self._manager()
        parts: list[str] = []
        for path, old_text in before.items():
            new_text = await _read(files, path)
            if new_text == old_text:
                continue
            found = await manager.diagnostics_after_edit(path, old_text, new_text)
            text = found.text()
            if text:
                parts.append(text)
        return "\n".join(parts) or None

    async def after_batch(
        self, touched: Sequence[Path], tooling: Tooling, call_id: str
    ) -> str | None:
        """Run the verify commands for the batch's files; the failures, or None."""
        if not self.code.verify or not touched:
            return None
        from agent.code.verify import run_verify

        refused: list[str] = []

        async def run(command: str, timeout: float) -> CommandResult:
            return await self._gated(command, timeout, tooling, call_id, refused)

        report = await run_verify(self.code.verify, touched, root=self.root, run=run)
        parts = [text for text in (report.text(),) if text]
        parts.extend(refused)
        return "\n\n".join(parts) or None

    async def _gated(
        self, command: str, timeout: float, tooling: Tooling, call_id: str, refused: list[str]
    ) -> CommandResult:
        from agent.code.verify import CommandResult

        rule = next((r for r in self.code.verify if _fills(r.command, command)), None)
        key = rule.command if rule is not None else command
        allowed = self._verdicts.get(key)
        if allowed is None:
            allowed = await self._ask(command, tooling, call_id)
            self._verdicts[key] = allowed
            if not allowed:
                refused.append(
                    f"[verify: `{key}` was not allowed to run; it is skipped for this session]"
                )
        if not allowed:
            return CommandResult(exit_code=0, output="")
        sandbox = (
            tooling.sandbox if tooling.sandbox is not None and tooling.sandbox.active else None
        )
        try:
            result = await tooling.processes.run(
                command, cwd=self.root, timeout=timeout, output_limit=OUTPUT_LIMIT, confine=sandbox
            )
        except Exception as exc:  # the sandbox refused it, bash is missing...
            _log.warning("verify command could not run", exc_info=True)
            return CommandResult(exit_code=None, output=f"could not run: {exc}")
        output = result.output
        if sandbox is not None:
            why = sandbox.stopped(result.output, result.exit_code)
            if why is not None:
                output = f"{output}\n(the sandbox stopped this command: {why})"
        return CommandResult(
            exit_code=None if result.timed_out else result.exit_code,
            output=output,
            timed_out=result.timed_out,
        )

    async def _ask(self, command: str, tooling: Tooling, call_id: str) -> bool:
        request = PermissionRequest(
            rule_tool="Bash", description=f"Run `{command}` (verify after edits)", command=command
        )
        try:
            verdict = await tooling.gate.check(
                call_id=call_id,
                tool_name="bash",
                request=request,
                read_only=False,
                ui=ToolUi(title=command_title(command, "verify after edits"), kind="execute"),
                raw_input={"command": command},
                mode=tooling.mode(),
                interaction=tooling.interaction,
                scope=tooling.scope,
            )
        except Exception:
            _log.warning("verify permission check failed", exc_info=True)
            return False
        return verdict.allowed and not verdict.cancelled


def _fills(template: str, command: str) -> bool:
    """Whether `command` is `template` with `{files}` filled in."""
    head, marker, tail = template.partition("{files}")
    if not marker:
        return template == command
    return command.startswith(head) and command.endswith(tail)


async def _read(files: FileBackend, path: Path) -> str:
    try:
        return await files.read_text(path)
    except (OSError, UnicodeDecodeError):
        return ""
    except Exception:  # an editor's read failing: the check has no baseline, not an error
        _log.warning("reading a file for its diagnostics failed", exc_info=True)
        return ""
