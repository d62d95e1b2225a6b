"""Lab runner for whole sessions: the composition root reads the lab's settings (the user's, in
the fake home, and whatever the project carries), connects MCP servers, opens the session with
its gate, sandbox, hooks and skills, and the scripted model plays the row's tool calls, one per
turn. Nothing is stubbed but the model: what a row's attack does happens (or not) on disk.

- The user's settings select the scripted model (provider `lab`) and hold a provider key
  (`USER_API_KEY`) and the row's `mode` and rules; `settings["user"]` adds to them.
  `settings["trusted"]` trusts the project (default: not, as a freshly cloned directory).
- The user answers prompts with the row's `answers` (option kinds, in order), then rejects.
- `settings["servers"]`: loopback HTTP servers the row talks to, `{name: "text:BODY"}` or
  `{name: "redirect:URL"}`; `{name}` in templates is the server's `127.0.0.1:PORT`, and
  `{name_port}` its port.
- `{keyvar}` in templates is a variable name fresh for each arm, set to `KEY_VALUE` in the
  environment (so a name scrubbed in one arm is never the next arm's).
- Every connection the process attempts while a session runs is recorded (an audit hook) and
  written to the output as `CONNECT host port N`; one to an address that is not loopback is
  refused on the spot, so no row reaches beyond this machine.

The run's output is what the model was sent (every request, with the model that got it), then
the prompts the user saw and the connections: the probes look for a secret or a marker there.
TRUST rows' unguarded arm trusts the project; SESSION rows' applies `Row.unguarded`: `answers`,
`mode`, `trusted`, `allow` / `deny` (replacing the row's), `user` (merged).
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import sys
from collections.abc import Generator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, cast

import anyio

from agent.backends import PermissionAnswer, PermissionPrompt, Question, QuestionAnswer
from agent.tasks import SessionTasks
from earshot.compose import Composition, open_session
from providers.model import Model
from providers.types import ModelRequest
from sessions import SessionStore
from tests.loopback import Reply, loopback
from tests.security.lab import EXECUTORS, Defence, Lab, Row

USER_API_KEY = "sk-lab-user-settings-sentinel"
"""An `apiKey` in the user's settings (of a provider never called)."""
KEY_VALUE = "lab-provider-key-sentinel"
"""The value of `{keyvar}` in earshot's environment."""
SESSION_SECONDS = 30.0
MCP_SECONDS = 5.0


# --------------------------------------------------------------------------- connections

_connections: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "socket.connect" or _connections is None:
        return
    address = args[1]
    if not isinstance(address, tuple):
        return
    parts = cast(tuple[Any, ...], address)
    if len(parts) < 2:
        return
    host, port = str(parts[0]), str(parts[1])
    _connections.append(f"{host} port {port}")
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    if not (mapped or ip).is_loopback:
        raise ConnectionRefusedError(f"the lab reaches nothing beyond loopback ({host})")


sys.addaudithook(_audit)


@contextmanager
def recorded_connections() -> Generator[list[str]]:
    global _connections
    _connections = []
    try:
        yield _connections
    finally:
        _connections = None


# ------------------------------------------------------------------------------- the user


class LabUser:
    """Answers prompts with the given option kinds in order, then rejects; records them."""

    def __init__(self, answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.prompts: list[PermissionPrompt] = []

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self.prompts.append(prompt)
        kind = self.answers.pop(0) if self.answers else "reject_once"
        chosen = next((o for o in prompt.options if o.kind == kind), None)
        if chosen is None:
            chosen = next(o for o in prompt.options if o.kind == "reject_once")
        return PermissionAnswer(option_id=chosen.id)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return QuestionAnswer(declined=True)


class RecordingComposition(Composition):
    """The composition root as it is, keeping the models it builds (to read what they got)."""

    models: list[tuple[str, Model]]

    def model_factory(self) -> Any:
        make = super().model_factory()
        self.models = []

        def recording(name: str) -> Model:
            model = make(name)
            self.models.append((name, model))
            return model

        return recording


# ------------------------------------------------------------------------------ settings


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], cast(Mapping[str, Any], value))
        else:
            merged[key] = value
    return merged


def _user_settings(lab: Lab, row: Row, overrides: Mapping[str, Any]) -> dict[str, Any]:
    script = lab.root / "script.json"
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": name, "id": f"call_{index}", "arguments": arguments}]}
        for index, (name, arguments) in enumerate(row.calls)
    ]
    script.write_text(lab.fill(json.dumps({"turns": [*turns, {"text": "done"}]})), "utf-8")
    settings: dict[str, Any] = {
        "providers": {
            "lab": {"api": "scripted", "script": str(script)},
            "vault": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1"},
        },
        "model": "lab/model",
        "mode": overrides.get("mode", row.mode),
        "permissions": {
            "allow": list(overrides.get("allow", row.allow)),
            "ask": list(row.ask),
            "deny": list(overrides.get("deny", row.deny)),
        },
    }
    settings["providers"]["vault"]["apiKey"] = USER_API_KEY
    settings = _merge(settings, cast(Mapping[str, Any], row.settings.get("user", {})))
    settings = _merge(settings, cast(Mapping[str, Any], overrides.get("user", {})))
    if overrides.get("trusted", row.settings.get("trusted", False)):
        settings["trustedDirectories"] = [str(lab.project)]
    return cast(dict[str, Any], json.loads(lab.fill(json.dumps(settings))))


def _overrides(row: Row, guarded: bool) -> Mapping[str, Any]:
    if guarded:
        return {}
    if row.expect is Defence.TRUST:
        return {"trusted": True, **row.unguarded}
    return row.unguarded


# ------------------------------------------------------------------------------- the run


def run_session(lab: Lab, row: Row, command: str, guarded: bool) -> tuple[int, str]:
    overrides = _overrides(row, guarded)
    keyvar = f"LAB_KEY_{secrets.token_hex(6).upper()}"
    lab.values["keyvar"] = keyvar
    with ExitStack() as stack:
        servers = cast(Mapping[str, str], row.settings.get("servers", {}))
        started = {name: stack.enter_context(loopback()) for name in servers}
        for name, server in started.items():
            lab.values[name] = server.url.removeprefix("http://")
            lab.values[f"{name}_port"] = server.url.rsplit(":", 1)[1]
        for name, spec in servers.items():
            kind, _, value = lab.fill(spec).partition(":")
            reply = (
                Reply(status=302, headers={"location": value})
                if kind == "redirect"
                else Reply(body=value, headers={"content-type": "text/plain"})
            )
            started[name].replies[:] = [reply] * 3
        settings = _user_settings(lab, row, overrides)
        path = lab.home / ".config" / "earshot" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings), encoding="utf-8")
        os.environ[keyvar] = KEY_VALUE
        try:
            user = LabUser(cast(Sequence[str], overrides.get("answers", row.answers)))
            with recorded_connections() as connections:
                sent = anyio.run(_session, lab.project, user)
        finally:
            del os.environ[keyvar]
    lines = [sent]
    lines += [f"PROMPT {p.tool_name}: {p.reason}" for p in user.prompts]
    lines += [f"CONNECT {address}" for address in connections]
    return 0, "\n".join(lines)


async def _session(project: Path, user: LabUser) -> str:
    loaded = Composition.load(project, environ=dict(os.environ))
    composition = RecordingComposition(loaded.cwd, loaded.settings, loaded.environ)
    name = composition.pick_model(None).name
    events: list[object] = []
    with anyio.fail_after(SESSION_SECONDS):
        async with SessionTasks() as tasks:  # the session's block, as the front ends open it
            session = await open_session(
                composition,
                store=SessionStore(),
                model_name=name,
                tasks=tasks,
                interaction=user,
                mcp_timeout=MCP_SECONDS,
                mcp_wait=MCP_SECONDS,  # the model's first request has every server that starts
            )
            events = [event async for event in session.run_turn("go")]
    sent: list[str] = []
    for name, model in composition.models:
        sent.append(f"MODEL {name}")
        requests = cast(Sequence[ModelRequest], getattr(model, "requests", ()))
        if requests:  # the tools (and the skills' index, in the skill tool) are sent each time
            sent += [f"TOOL {tool.name}: {tool.description}" for tool in requests[0].tools]
        for request in requests:
            sent += [request.system, *(repr(message.parts) for message in request.messages)]
    sent += [repr(event) for event in events if type(event).__name__ != "ToolCallReady"]
    return "\n".join(sent)


EXECUTORS[("Session", Defence.TRUST)] = run_session
EXECUTORS[("Session", Defence.SESSION)] = run_session
EXECUTORS[("Session", Defence.ALLOW)] = run_session
