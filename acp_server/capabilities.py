"""What we learn from the client's capabilities (what we advertise is in `advertised`).

`checked` is the boundary: the `clientCapabilities` of `initialize` as the protocol's typed
shape, read leniently (a capability of an unexpected shape is one the client does not have, never
an error: clients add members freely). `ClientCapabilities` is what the server keeps of it.

On the path to the `initialize` reply, which comes before the event loop
(`acp_server.first_line`), so cheap to import: no `dataclasses` (it imports `inspect`, ~40M
instructions, more than the rest of that path), hence a `NamedTuple` and a plain class; and no
`from __future__ import annotations` (a `NamedTuple` turns each string annotation into a
`ForwardRef`, compiling it: ~1.2M instructions a field, 12M for `ClientCapabilities`), hence
the quoted annotations of names imported only for type checking.
"""

from typing import TYPE_CHECKING, Any, NamedTuple, cast

if TYPE_CHECKING:
    from acp_server.protocol.connection import (
        AuthCapabilities,
        ClientSessionCapabilities,
        ElicitationCapabilities,
        FileSystemCapabilities,
    )
    from acp_server.protocol.connection import (
        ClientCapabilities as WireCapabilities,
    )

_Fields = dict[str, object]


def _fields(value: object) -> _Fields | None:
    return cast("_Fields", value) if isinstance(value, dict) else None


def _bools(fields: _Fields, *names: str) -> dict[str, bool]:
    return {name: fields[name] is True for name in names if name in fields}


def _present(fields: _Fields, *names: str) -> dict[str, object]:
    """ACP marks a capability as supported with an object; null/absent means unsupported."""
    return {name: {} for name in names if isinstance(fields.get(name), dict)}


def checked(raw: object) -> "WireCapabilities":
    """`clientCapabilities` as its typed shape, keeping only the members earshot reads, each of
    the right type."""
    caps = _fields(raw) or {}
    result: WireCapabilities = {}
    fs = _fields(caps.get("fs"))
    if fs is not None:
        result["fs"] = cast("FileSystemCapabilities", _bools(fs, "readTextFile", "writeTextFile"))
    if "terminal" in caps:
        result["terminal"] = caps["terminal"] is True
    session = _fields(caps.get("session"))
    if session is not None:
        kept: dict[str, object] = _present(session, "notices", "compaction")
        config = _fields(session.get("configOptions"))
        if config is not None:
            kept["configOptions"] = _present(config, "boolean")
        result["session"] = cast("ClientSessionCapabilities", kept)
    elicitation = _fields(caps.get("elicitation"))
    if elicitation is not None:
        result["elicitation"] = cast("ElicitationCapabilities", _present(elicitation, "form"))
    auth = _fields(caps.get("auth"))
    if auth is not None:
        result["auth"] = cast("AuthCapabilities", _bools(auth, "terminal"))
    # Unstable (`schema.unstable.json`): `plan_update`/`plan_removed`, and subagents as child
    # sessions (`subagent_update`, `session_message`).
    cast("dict[str, object]", result).update(_present(caps, "plan", "subagents"))
    meta = _fields(caps.get("_meta"))
    if meta is not None:
        kept_meta: dict[str, object] = {}
        for name in ("terminal_output", "terminal-auth"):
            if name in meta:
                kept_meta[name] = meta[name] is True
        earshot = _fields(meta.get("earshot"))
        if earshot is not None and "cancelRequest" in earshot:
            kept_meta["earshot"] = {"cancelRequest": earshot["cancelRequest"] is True}
        if kept_meta:
            result["_meta"] = cast("dict[str, Any]", kept_meta)
    return result


CANCEL_REQUEST_CLIENTS = frozenset({"zed"})
"""Clients (`clientInfo.name`) whose source shows they take `$/cancel_request`: Zed (the Rust
SDK). ACP v1 has no capability for it, and the Python SDK 0.12.1 logs "Method not found" with
a traceback for each one (Toad 0.6.20 answers it with an error), so it goes only to these, to
a client that advertises `_meta.earshot.cancelRequest`, and to one that has sent one itself
(`acp_server.jsonrpc`)."""


class ClientLearned:
    """What a connection learned of its client by serving it, shared by its sessions."""

    __slots__ = ("elicitation_fails",)

    def __init__(self) -> None:
        self.elicitation_fails = False
        """`elicitation/create` was answered with an error: Zed advertises `elicitation` always,
        but a build without its ACP beta flag refuses every request (`ElicitationStore::
        validate_request`). Questions then take the permission-choice form for good."""


class ClientCapabilities(NamedTuple):
    """The client's capabilities; anything omitted is unsupported. Built by name (`of`)."""

    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False
    elicitation_form: bool = False
    notices: bool = False
    compaction: bool = False
    boolean_config: bool = False
    terminal_output_meta: bool = False
    cancel_request: bool = False
    """The client takes `$/cancel_request` (`CANCEL_REQUEST_CLIENTS`)."""
    terminal_auth: bool = False
    """The client can run earshot in a terminal to sign in (`auth.terminal`, or Zed's
    `_meta["terminal-auth"]`)."""
    plans: bool = False
    """Unstable `plan`: the todo list goes as `plan_update` (with its id) and `plan_removed`
    instead of whole `plan` updates."""
    subagents: bool = False
    """Unstable `subagents`: a subagent is a child session (`subagent_update` on the parent,
    its work as the child's own updates, its prompt as a `session_message`) instead of a list
    inside its `task` call."""

    @classmethod
    def of_v2(cls, raw: object) -> "ClientCapabilities":
        """A v2 client's `capabilities`, read leniently. v2 has no client fs or terminal (the
        agent's own files and terminals serve), and notices and compaction updates need no
        capability there; a v2 client takes `$/cancel_request` (its SDK withdraws prompts and
        permission requests with it)."""
        caps = _fields(raw) or {}
        elicitation = _fields(caps.get("elicitation")) or {}
        auth = _fields(caps.get("auth")) or {}
        return cls(
            elicitation_form=_fields(elicitation.get("form")) is not None,
            notices=True,
            compaction=True,
            cancel_request=True,
            terminal_auth=_fields(auth.get("terminal")) is not None,
        )

    @classmethod
    def of(cls, caps: "WireCapabilities", client_name: str = "") -> "ClientCapabilities":
        fs = caps.get("fs") or {}
        session = caps.get("session") or {}
        config = session.get("configOptions") or {}
        elicitation = caps.get("elicitation") or {}
        auth = caps.get("auth") or {}
        meta = caps.get("_meta") or {}
        earshot = _fields(meta.get("earshot")) or {}
        return cls(
            read_text_file=fs.get("readTextFile") is True,
            write_text_file=fs.get("writeTextFile") is True,
            terminal=caps.get("terminal") is True,
            elicitation_form=elicitation.get("form") is not None,
            notices=session.get("notices") is not None,
            compaction=session.get("compaction") is not None,
            boolean_config=config.get("boolean") is not None,
            terminal_output_meta=meta.get("terminal_output") is True,
            cancel_request=client_name.lower() in CANCEL_REQUEST_CLIENTS
            or earshot.get("cancelRequest") is True,
            terminal_auth=auth.get("terminal") is True or meta.get("terminal-auth") is True,
            plans=isinstance(cast("dict[str, object]", caps).get("plan"), dict),
            subagents=isinstance(cast("dict[str, object]", caps).get("subagents"), dict),
        )
