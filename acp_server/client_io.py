"""The session's I/O backed by the editor: permissions and questions (`AcpInteraction`), text files
(`AcpFiles`, `fs/*`) and commands (`AcpProcesses`, `terminal/*`).

Each backend asks the client only for what it advertised and falls back to local I/O otherwise:
files outside the roots, binary files and images are always local (editor fs is text-only).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import anyio

from acp_server.background_terminals import TerminalCommand
from acp_server.capabilities import ClientCapabilities
from acp_server.editor_files import read_through_editor, write_through_editor
from acp_server.framing import Message
from acp_server.jsonrpc import ClientError, Connection, ConnectionClosed
from acp_server.updates import UpdateTranslator, permission_request
from agent.backends import (
    Confinement,
    FileBackend,
    OutputSink,
    PermissionAnswer,
    PermissionOption,
    PermissionPrompt,
    ProcessBackend,
    ProcessResult,
    Question,
    QuestionAnswer,
    TerminalSink,
)
from agent.safe_paths import Expected

if TYPE_CHECKING:
    from acp_server.protocol.client import CreateTerminalRequest
    from acp_server.protocol.client import PermissionOption as WireOption
    from acp_server.protocol.elicitation import ElicitationPropertySchema
    from acp_server.protocol.prompt import SessionUpdate

_TERMINAL_CLEANUP_SECONDS = 5.0


class SessionChannel:
    """The connection as one session sees it: updates and client requests. A request made
    inside a turn (a permission prompt, a question, a file read) is cancelled with the turn's
    cancel scope, which withdraws it from the client (`$/cancel_request`)."""

    def __init__(self, connection: Connection, client: ClientCapabilities) -> None:
        self.connection = connection
        self.client = client
        self.session_id = ""
        self.translator = UpdateTranslator(client=client)

    async def update(self, update: SessionUpdate) -> None:
        await self.connection.notify(
            "session/update", {"sessionId": self.session_id, "update": update}
        )

    async def request(self, method: str, params: Message) -> object:
        """Ask the client (`sessionId` added); the answer as it came, for the caller to read."""
        return await self.connection.request(method, {"sessionId": self.session_id, **params})


# ----------------------------------------------------------------------------- interaction


def _fields(value: object) -> dict[str, object]:
    """An answer's members (an answer of another shape has none: the client is not trusted to
    answer in shape)."""
    return cast("dict[str, object]", value) if isinstance(value, dict) else {}


def _selected(result: object) -> str | None:
    """The chosen option id, or None for a cancelled (or unreadable) outcome."""
    outcome_fields = _fields(_fields(result).get("outcome"))
    if outcome_fields.get("outcome") != "selected":
        return None
    option_id = outcome_fields.get("optionId")
    return option_id if isinstance(option_id, str) else None


class AcpInteraction:
    """Permission prompts via `session/request_permission`; questions via `elicitation/create`
    (form mode) when advertised, else as permission choices. The only channel a prompt takes to
    the client; a cancelled turn withdraws it (its cancel scope cancels the request)."""

    def __init__(self, channel: SessionChannel) -> None:
        self.channel = channel

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        channel = self.channel
        params = permission_request(channel.translator, prompt)
        try:
            result = await channel.request("session/request_permission", params)
        except ConnectionClosed:
            return PermissionAnswer(option_id=None)
        except ClientError:
            return PermissionAnswer(option_id=_fallback_reject(prompt.options))
        chosen = _selected(result)
        if chosen is None:
            return PermissionAnswer(option_id=None)
        if all(option.id != chosen for option in prompt.options):
            return PermissionAnswer(option_id=_fallback_reject(prompt.options))
        return PermissionAnswer(option_id=chosen)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        try:
            if self.channel.client.elicitation_form:
                return await self._elicit(question)
            return await self._ask_with_permission(question)
        except (ConnectionClosed, ClientError):
            return QuestionAnswer(declined=True)

    async def _elicit(self, question: Question) -> QuestionAnswer:
        answer: ElicitationPropertySchema
        if question.choices and question.multiple:
            answer = {
                "type": "array",
                "title": "Answer",
                "items": {"type": "string", "enum": list(question.choices)},
            }
        elif question.choices:
            answer = {"type": "string", "title": "Answer", "enum": list(question.choices)}
        else:
            answer = {"type": "string", "title": "Answer"}
        properties: dict[str, ElicitationPropertySchema] = {"answer": answer}
        required = ["answer"]
        if question.choices and question.allow_other:
            properties["other"] = {
                "type": "string",
                "title": "Other",
                "description": "Your own answer instead of the choices",
            }
            required = []
        params: Message = {
            "mode": "form",
            "message": question.question,
            "toolCallId": question.call_id,
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        }
        result = await self.channel.request("elicitation/create", params)
        response = _fields(result)
        if response.get("action") != "accept":
            return QuestionAnswer(declined=True)
        values = _fields(response.get("content"))
        answers: list[str] = []
        other = values.get("other")
        if isinstance(other, str) and other.strip():
            answers.append(other.strip())
        picked = values.get("answer")
        if isinstance(picked, str) and picked:
            answers.append(picked)
        elif isinstance(picked, list):
            answers.extend(str(item) for item in cast("list[object]", picked))
        if not answers:
            return QuestionAnswer(declined=True)
        return QuestionAnswer(answers=tuple(answers))

    async def _ask_with_permission(self, question: Question) -> QuestionAnswer:
        if not question.choices:
            # Without elicitation there is no free-text input in ACP: decline at once, never hang.
            return QuestionAnswer(declined=True)
        channel = self.channel
        options: list[WireOption] = [
            {"optionId": f"choice-{index}", "name": choice, "kind": "allow_once"}
            for index, choice in enumerate(question.choices)
        ]
        options.append({"optionId": "decline", "name": "Don't answer", "kind": "reject_once"})
        params: Message = {
            "toolCall": {"toolCallId": question.call_id, "title": question.question},
            "options": options,
        }
        chosen = _selected(await channel.request("session/request_permission", params))
        if chosen is None or not chosen.startswith("choice-"):
            return QuestionAnswer(declined=True)
        index = int(chosen.removeprefix("choice-"))
        if not 0 <= index < len(question.choices):
            return QuestionAnswer(declined=True)
        return QuestionAnswer(answers=(question.choices[index],))


def _fallback_reject(options: Sequence[PermissionOption]) -> str | None:
    return next((option.id for option in options if option.kind == "reject_once"), None)


# ---------------------------------------------------------------------------------- files


def _root_of(path: Path, roots: Sequence[Path]) -> Path | None:
    return next((root for root in roots if path == root or root in path.parents), None)


class AcpFiles:
    """Text files inside the roots through the editor (its unsaved buffers, its review UI);
    everything else locally. Paths are real (what the permission gate decided on); the editor is
    handed exactly that path, and the place is checked around its request
    (`acp_server.editor_files`)."""

    def __init__(self, channel: SessionChannel, roots: Sequence[Path], local: FileBackend) -> None:
        self.channel = channel
        self.roots = tuple(Path(os.path.realpath(root)) for root in roots)
        self.local = local

    def _delegated(self, path: Path, capability: bool) -> Path | None:
        """The root `path` is in, when the editor does this for it."""
        return _root_of(path, self.roots) if capability else None

    async def read_text(self, path: Path, *, expected: Expected = "any") -> str:
        root = self._delegated(path, self.channel.client.read_text_file)
        if root is None:
            return await self.local.read_text(path, expected=expected)

        async def ask() -> str | None:
            try:
                result = await self.channel.request("fs/read_text_file", {"path": str(path)})
            except ClientError:
                return None
            content = _fields(result).get("content")
            return content if isinstance(content, str) else None

        return await read_through_editor(root, path, expected, ask)

    async def write_text(self, path: Path, content: str) -> None:
        root = self._delegated(path, self.channel.client.write_text_file)
        if root is None:
            await self.local.write_text(path, content)
            return

        async def send() -> None:
            try:
                await self.channel.request(
                    "fs/write_text_file", {"path": str(path), "content": content}
                )
            except ClientError as exc:
                raise PermissionError(
                    13, f"the editor did not write the file: {exc.message}", str(path)
                ) from exc

        await write_through_editor(root, path, content, send)


# ------------------------------------------------------------------------------ processes


class AcpProcesses:
    """`bash -c` in an editor terminal when the client has one (embedded live in the tool call),
    else local. A confined command is handed to the terminal as the sandbox's whole command line
    (the editor runs on the same machine), which also removes the provider keys from the
    editor's environment before the sandbox starts."""

    def __init__(self, channel: SessionChannel, local: ProcessBackend) -> None:
        self.channel = channel
        self.local = local

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout: float,
        output_limit: int,
        env: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
        on_terminal: TerminalSink | None = None,
        confine: Confinement | None = None,
    ) -> ProcessResult:
        if not self.channel.client.terminal:
            return await self.local.run(
                command,
                cwd=cwd,
                timeout=timeout,
                output_limit=output_limit,
                env=env,
                on_output=on_output,
                on_terminal=on_terminal,
                confine=confine,
            )
        argv = ["bash", "-c", command]
        if confine is None:
            return await self._terminal(argv, cwd, timeout, output_limit, env, on_terminal)
        async with confine.launch(argv, cwd=cwd, scrub_env=True) as confined:
            return await self._terminal(confined, cwd, timeout, output_limit, env, on_terminal)

    async def start_background(
        self, argv: Sequence[str], *, cwd: Path, output_limit: int
    ) -> TerminalCommand | None:
        """A command left running in an editor terminal (`agent.background`); None without
        the terminal capability (it runs locally then)."""
        if not self.channel.client.terminal:
            return None
        return await TerminalCommand.create(self.channel, argv, cwd=cwd, output_limit=output_limit)

    async def _terminal(
        self,
        argv: Sequence[str],
        cwd: Path,
        timeout: float,
        output_limit: int,
        env: Mapping[str, str] | None,
        on_terminal: TerminalSink | None,
    ) -> ProcessResult:
        params: CreateTerminalRequest = {
            "sessionId": self.channel.session_id,
            "command": argv[0],
            "args": list(argv[1:]),
            "cwd": str(cwd),
            "outputByteLimit": max(0, output_limit),
        }
        if env:
            params["env"] = [{"name": name, "value": value} for name, value in env.items()]
        created = await self.channel.request("terminal/create", params)
        terminal_id = _fields(created).get("terminalId")
        if not isinstance(terminal_id, str):
            raise OSError("the editor did not create a terminal")
        try:
            return await self._follow(terminal_id, timeout, on_terminal)
        finally:
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(_TERMINAL_CLEANUP_SECONDS),
                contextlib.suppress(ClientError, ConnectionClosed),
            ):
                await self.channel.request("terminal/release", {"terminalId": terminal_id})

    async def _follow(
        self, terminal_id: str, timeout: float, on_terminal: TerminalSink | None
    ) -> ProcessResult:
        ids: Message = {"terminalId": terminal_id}
        if on_terminal is not None:
            await on_terminal(terminal_id)
        status: object = None
        try:
            with anyio.move_on_after(timeout) as deadline:
                status = await self.channel.request("terminal/wait_for_exit", ids)
        except anyio.get_cancelled_exc_class():
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(_TERMINAL_CLEANUP_SECONDS),
                contextlib.suppress(ClientError, ConnectionClosed),
            ):
                await self.channel.request("terminal/kill", ids)
            raise
        timed_out = deadline.cancelled_caught
        if timed_out:
            await self.channel.request("terminal/kill", ids)
        output = await self.channel.request("terminal/output", ids)
        output_fields = _fields(output)
        exit_fields: object = output_fields.get("exitStatus")
        if not timed_out and status is not None:
            exit_fields = status
        exit_status = _fields(exit_fields)
        exit_code = exit_status.get("exitCode")
        signal = exit_status.get("signal")
        return ProcessResult(
            exit_code=None if timed_out or type(exit_code) is not int else exit_code,
            output=str(output_fields.get("output", "")),
            truncated=output_fields.get("truncated") is True,
            timed_out=timed_out,
            signal=signal if isinstance(signal, str) else None,
            terminal_id=terminal_id,
        )
