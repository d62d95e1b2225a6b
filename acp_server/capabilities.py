"""What we learn from the client's capabilities (what we advertise is in `advertised`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast


def _flag(value: object) -> bool:
    return value is True


def _present(value: object) -> bool:
    """ACP marks a capability as supported with an object; null/absent means unsupported."""
    return isinstance(value, dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientCapabilities:
    """The client's capabilities; anything omitted is unsupported."""

    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False
    elicitation_form: bool = False
    notices: bool = False
    compaction: bool = False
    boolean_config: bool = False
    terminal_output_meta: bool = False

    @classmethod
    def parse(cls, raw: object) -> ClientCapabilities:
        if not isinstance(raw, dict):
            return cls()
        caps = cast("dict[str, Any]", raw)
        fs = caps.get("fs")
        fs_caps = cast("dict[str, Any]", fs) if isinstance(fs, dict) else {}
        elicitation = caps.get("elicitation")
        elicitation_caps = (
            cast("dict[str, Any]", elicitation) if isinstance(elicitation, dict) else {}
        )
        session = caps.get("session")
        session_caps = cast("dict[str, Any]", session) if isinstance(session, dict) else {}
        config = session_caps.get("configOptions")
        config_caps = cast("dict[str, Any]", config) if isinstance(config, dict) else {}
        meta = caps.get("_meta")
        meta_caps = cast("dict[str, Any]", meta) if isinstance(meta, dict) else {}
        return cls(
            read_text_file=_flag(fs_caps.get("readTextFile")),
            write_text_file=_flag(fs_caps.get("writeTextFile")),
            terminal=_flag(caps.get("terminal")),
            elicitation_form=_present(elicitation_caps.get("form")),
            notices=_present(session_caps.get("notices")),
            compaction=_present(session_caps.get("compaction")),
            boolean_config=_present(config_caps.get("boolean")),
            terminal_output_meta=_flag(meta_caps.get("terminal_output")),
        )
