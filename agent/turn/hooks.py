"""User-configured hook commands around tool calls, prompts and the end of a turn.

Each hook runs as `bash -c <command>` in the cwd, in its own process group, with a JSON
description of the event on stdin (`{"hook", "session_id", "cwd", ...}`) and a timeout (default
60 s) after which the whole group is killed. Its environment is earshot's without the provider
credentials (`agent.tool_env`), plus `EARSHOT_PROJECT_DIR` and `EARSHOT_HOOK`.

What a hook can do is only ever to say no: `HookVerdict` has no "allow", so a hook can block a
call but never let one past the permission gate.

- Exit 2 blocks a `pre_tool_use` or `user_prompt_submit` hook's subject, with stderr as the
  reason; so does exit 0 with JSON stdout `{"decision": "block", "reason": "..."}`. Any other
  stdout is ignored. Reasons are capped at 2,000 characters.
- A pre/prompt hook that TIMES OUT blocks: it was still deciding, and running the call without its
  verdict would race it. A hook that crashes (any other exit, bash missing) does not block, the
  convention users copy from Claude Code (`exit 1` is a non-blocking error), but it is logged and
  named in the verdict's `reason` so the failure is visible; the permission gate still decides
  the call as if there were no hook.
- `post_tool_use` and `stop` hooks cannot block anything; their failures are logged.

Matchers (pre/post only): empty, None or `*` match every tool; `A|B` alternatives; each is a
glob over the tool name, compared case-insensitively (`Bash` matches the `bash` tool);
`mcp__server` matches every tool of that server.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

import anyio
from anyio.abc import ByteReceiveStream, Process

from agent.tool_env import tool_environment
from providers.logs import get_logger
from providers.records import Record

if TYPE_CHECKING:
    from agent.settings import HookRule, HooksSettings

_log = get_logger(__name__)

HookName: TypeAlias = Literal["pre_tool_use", "post_tool_use", "user_prompt_submit", "stop"]
DEFAULT_TIMEOUT = 60.0
STOP_TIMEOUT_SECONDS = 30.0
"""The stop hooks of one turn, all together: the turn's end waits for them."""
_REASON_CAP = 2_000
_OUTPUT_CAP = 64_000
_BLOCK_EXIT = 2


class HookVerdict(Record, kw_only=False):
    blocked: bool = False
    reason: str | None = None


class HookSpec(Protocol):
    """What a hook entry provides (`agent.settings.scopes.HookRule` and `HookSettings` both do)."""

    @property
    def matcher(self) -> str | None: ...
    @property
    def command(self) -> str: ...
    @property
    def timeout(self) -> float | None: ...


class _Run(Record, kw_only=False):
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str | None = None


class HookRunner:
    """Runs the configured hooks; with no hooks every call is a no-op."""

    def __init__(self, hooks: HooksSettings | Sequence[HookRule] | None, *, cwd: Path) -> None:
        self.cwd = cwd
        self._hooks: dict[HookName, tuple[HookSpec, ...]] = _by_event(hooks)

    async def pre_tool_use(
        self, *, session_id: str, tool_name: str, tool_input: object, call_id: str
    ) -> HookVerdict:
        """Before a call runs (after the gate allowed it): may block it."""
        payload = {"tool_name": tool_name, "tool_input": tool_input, "call_id": call_id}
        specs = [spec for spec in self._hooks["pre_tool_use"] if matches(spec.matcher, tool_name)]
        return await self._blocking("pre_tool_use", specs, session_id, payload)

    async def post_tool_use(
        self,
        *,
        session_id: str,
        tool_name: str,
        tool_input: object,
        call_id: str,
        result: str,
        is_error: bool,
    ) -> None:
        """After a call finished; cannot change or block anything."""
        payload = {
            "tool_name": tool_name,
            "tool_input": tool_input,
            "call_id": call_id,
            "result": result,
            "is_error": is_error,
        }
        specs = [spec for spec in self._hooks["post_tool_use"] if matches(spec.matcher, tool_name)]
        await self._informational("post_tool_use", specs, session_id, payload)

    async def user_prompt_submit(self, *, session_id: str, prompt: str) -> HookVerdict:
        """Before a prompt reaches the model: may block it."""
        specs = list(self._hooks["user_prompt_submit"])
        return await self._blocking("user_prompt_submit", specs, session_id, {"prompt": prompt})

    async def prompt_blocked(self, *, session_id: str, prompt: str) -> str | None:
        """`user_prompt_submit`, as a turn asks it: None when the prompt may go ahead, else why
        not (a hook that cannot run blocks the prompt too, saying so)."""
        try:
            verdict = await self.user_prompt_submit(session_id=session_id, prompt=prompt)
        except Exception as exc:
            _log.warning("user_prompt_submit hook failed", exc_info=True)
            return f"a user_prompt_submit hook failed: {exc}"
        if verdict.blocked:
            return verdict.reason or "blocked by a user_prompt_submit hook"
        return None

    async def stop(self, *, session_id: str, reason: str) -> None:
        """At the end of a turn (at most `STOP_TIMEOUT_SECONDS`; a failure is only logged)."""
        specs = list(self._hooks["stop"])
        try:
            with anyio.move_on_after(STOP_TIMEOUT_SECONDS):
                await self._informational("stop", specs, session_id, {"reason": reason})
        except Exception:
            _log.warning("stop hook failed", exc_info=True)

    # ------------------------------------------------------------------------------------

    async def _blocking(
        self, hook: HookName, specs: Sequence[HookSpec], session_id: str, payload: dict[str, Any]
    ) -> HookVerdict:
        failures: list[str] = []
        for spec in specs:
            run = await self._run(hook, spec, session_id, payload)
            if run.timed_out:
                return HookVerdict(True, f"{hook} hook `{_short(spec.command)}` timed out")
            if run.exit_code == _BLOCK_EXIT:
                reason = _cap(run.stderr.strip()) or f"blocked by {hook} hook"
                return HookVerdict(True, reason)
            if run.exit_code == 0:
                blocked = _json_block(run.stdout)
                if blocked is not None:
                    return HookVerdict(True, blocked or f"blocked by {hook} hook")
                continue
            failure = _failure(hook, spec, run)
            _log.warning(failure)
            failures.append(failure)
        return HookVerdict(False, "; ".join(failures) if failures else None)

    async def _informational(
        self, hook: HookName, specs: Sequence[HookSpec], session_id: str, payload: dict[str, Any]
    ) -> None:
        for spec in specs:
            run = await self._run(hook, spec, session_id, payload)
            if run.timed_out or run.exit_code != 0:
                _log.warning(_failure(hook, spec, run))

    async def _run(
        self, hook: HookName, spec: HookSpec, session_id: str, payload: dict[str, Any]
    ) -> _Run:
        document = {"hook": hook, "session_id": session_id, "cwd": str(self.cwd), **payload}
        data = json.dumps(document, default=str, ensure_ascii=False).encode()
        env = tool_environment(extra={"EARSHOT_PROJECT_DIR": str(self.cwd), "EARSHOT_HOOK": hook})
        timeout = spec.timeout if spec.timeout and spec.timeout > 0 else DEFAULT_TIMEOUT
        return await run_hook_command(
            spec.command, cwd=self.cwd, stdin=data, env=env, timeout=timeout
        )


async def run_hook_command(
    command: str, *, cwd: Path, stdin: bytes, env: Mapping[str, str], timeout: float
) -> _Run:
    """Run `bash -c command` in its own process group; kill the group on timeout."""
    try:
        process = await anyio.open_process(
            ["bash", "-c", command], cwd=str(cwd), env=dict(env), start_new_session=True
        )
    except OSError as error:
        return _Run(None, "", "", error=f"could not start bash: {error.strerror or error}")
    stdout = bytearray()
    stderr = bytearray()
    timed_out = False
    async with process:
        try:
            with anyio.fail_after(timeout):
                async with anyio.create_task_group() as group:
                    group.start_soon(_feed, process, stdin)
                    group.start_soon(_drain, process.stdout, stdout)
                    group.start_soon(_drain, process.stderr, stderr)
                await process.wait()
        except TimeoutError:
            timed_out = True
        finally:
            if process.returncode is None or timed_out:
                _kill_group(process)
                with anyio.move_on_after(5, shield=True):
                    await process.wait()
    return _Run(
        None if timed_out else process.returncode,
        stdout.decode(errors="replace"),
        stderr.decode(errors="replace"),
        timed_out=timed_out,
    )


async def _feed(process: Process, data: bytes) -> None:
    stream = process.stdin
    if stream is None:
        return
    try:
        await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # the hook did not read its input: allowed
    finally:
        await stream.aclose()


async def _drain(stream: ByteReceiveStream | None, into: bytearray) -> None:
    if stream is None:
        return
    try:
        async for chunk in stream:
            room = _OUTPUT_CAP - len(into)
            if room > 0:
                into.extend(chunk[:room])
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        return


def _kill_group(process: Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def matches(matcher: str | None, tool_name: str) -> bool:
    """Whether a hook's matcher selects `tool_name` (see the module docstring)."""
    if matcher is None or not matcher.strip():
        return True
    name = tool_name.lower()
    for alternative in matcher.split("|"):
        pattern = alternative.strip().lower()
        if not pattern:
            continue
        if pattern == "*" or fnmatch.fnmatchcase(name, pattern):
            return True
        if (
            pattern.startswith("mcp__")
            and pattern.count("__") == 1
            and name.startswith(pattern + "__")
        ):
            return True
    return False


def _by_event(
    hooks: HooksSettings | Sequence[HookRule] | None,
) -> dict[HookName, tuple[HookSpec, ...]]:
    events: dict[HookName, list[HookSpec]] = {
        "pre_tool_use": [],
        "post_tool_use": [],
        "user_prompt_submit": [],
        "stop": [],
    }
    if isinstance(hooks, Sequence):
        for rule in hooks:
            events[rule.event].append(rule)
    elif hooks is not None:
        events["pre_tool_use"].extend(hooks.pre_tool_use)
        events["post_tool_use"].extend(hooks.post_tool_use)
        events["user_prompt_submit"].extend(hooks.user_prompt_submit)
        events["stop"].extend(hooks.stop)
    return {name: tuple(specs) for name, specs in events.items()}


def _json_block(stdout: str) -> str | None:
    """The reason of a `{"decision": "block"}` answer ("" without one), or None."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        answer = json.loads(text)
    except ValueError:
        return None
    if not isinstance(answer, dict):
        return None
    fields: dict[str, Any] = answer  # pyright: ignore[reportUnknownVariableType]
    if fields.get("decision") != "block":
        return None
    reason = fields.get("reason")
    return _cap(reason.strip()) if isinstance(reason, str) else ""


def _failure(hook: HookName, spec: HookSpec, run: _Run) -> str:
    if run.timed_out:
        what = "timed out"
    elif run.error is not None:
        what = run.error
    else:
        what = f"exited with {run.exit_code}"
        detail = run.stderr.strip()
        if detail:
            what += f": {_cap(detail, 300)}"
    return f"{hook} hook `{_short(spec.command)}` failed ({what}); continuing"


def _cap(text: str, limit: int = _REASON_CAP) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(command: str) -> str:
    return _cap(" ".join(command.split()), 80)
