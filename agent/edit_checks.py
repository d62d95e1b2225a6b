"""Edits that check themselves: LSP diagnostics after each edit, the verify loop after a batch.

`EditChecks` belongs to a session (built from `Settings.code`); the executor calls it around
every successful `edit`/`write` (`PermissionRequest.is_file_edit`) and once more after the last
edit of a batch, and appends what it says to that call's tool result, so the model sees a broken
edit in the same step. Nothing is said about a clean edit.

- LSP (`agent.lsp`): the old text of each edited file a configured server checks is read before
  the edit, the new one after; `LspManager.diagnostics_after_edit` reports only what the edit
  introduced. The servers start on the first edit of a turn that needs them and stop at the
  turn's end (`turn()`): a server's reader task needs a task group, and a session has none that
  outlives its turns (see the README's limits).
- Verify (`agent.verify`): the configured commands whose globs match the batch's files run
  through the same permission gate as `bash` (a `Bash` request for the command line) and in the
  same sandbox. The gate's verdict is remembered per configured command for the session, so
  the user is never asked twice for the same one; a refused command is skipped and said once.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from agent.backends import FileBackend, ToolUi
from agent.code_settings import CodeConfig
from agent.tools.base import PermissionRequest
from providers.logs import get_logger

if TYPE_CHECKING:
    from agent.lsp.manager import LspManager
    from agent.sandbox import Sandbox
    from agent.tooling import Tooling
    from agent.verify import CommandResult

_log = get_logger(__name__)

OUTPUT_LIMIT: Final = 200_000
"""Bytes of a verify command's output kept (trimmed to the touched files afterwards)."""


@dataclass(slots=True)
class EditChecks:
    """A session's LSP servers and verify commands (see the module docstring)."""

    code: CodeConfig
    root: Path
    sandbox: Sandbox | None = None
    _verdicts: dict[str, bool] = field(default_factory=lambda: {})
    """The gate's verdict per configured verify command (its template), for the session."""
    _lsp: LspManager | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.code.verify or self.code.lsp)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncGenerator[None]:
        """The turn's language servers: started lazily inside, stopped when it exits."""
        if not self.code.lsp:
            yield
            return
        # Only a session with `lsp` settings pays for the client (and lsprotocol, at a start).
        from agent.lsp.client import server_configs
        from agent.lsp.manager import LspManager

        confinement = self.sandbox if self.sandbox is not None and self.sandbox.active else None
        manager = LspManager(server_configs(self.code.lsp), self.root, confinement=confinement)
        async with manager:
            self._lsp = manager
            try:
                yield
            finally:
                self._lsp = None

    async def before_edit(self, paths: Sequence[Path], files: FileBackend) -> dict[Path, str]:
        """The current text of each path a language server checks (absent file: empty)."""
        manager = self._lsp
        if manager is None:
            return {}
        texts: dict[Path, str] = {}
        for path in paths:
            if manager.config_for(path) is None:
                continue
            texts[path] = await _read(files, path)
        return texts

    async def after_edit(self, before: dict[Path, str], files: FileBackend) -> str | None:
        """What the language servers say the edit introduced, or None."""
        manager = self._lsp
        if manager is None or not before:
            return None
        parts: list[str] = []
        for path, old_text in before.items():
            new_text = await _read(files, path)
            if new_text == old_text:
                continue
            text = (await manager.diagnostics_after_edit(path, old_text, new_text)).text()
            if text:
                parts.append(text)
        return "\n".join(parts) or None

    async def after_batch(
        self, touched: Sequence[Path], tooling: Tooling, call_id: str
    ) -> str | None:
        """Run the verify commands for the batch's files; the failures, or None."""
        if not self.code.verify or not touched:
            return None
        from agent.verify import run_verify

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
        from agent.verify import CommandResult

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
                ui=ToolUi(title=f"Verify: {command}", kind="execute"),
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
