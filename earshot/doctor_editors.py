"""`earshot doctor`: the editor entries that start earshot, and whether their command exists.

Looked for where each editor reads them: Zed's `~/.config/zed/settings.json` (`agent_servers`,
JSON with comments), JetBrains' `~/.jetbrains/acp.json` (`agent_servers`) and Toad's agent files
(`run_command`). Toad 0.6.20 reads those only from its own package data, `toad/data/agents/*.toml`
beside the `toad` it runs (`toad/agents.py::read_agents`, `importlib.resources`); the
`~/.config/toad/agents/` directory earlier docs named is not read (a pull request to read it is
open upstream), so a file there is reported as unread. An entry "starts earshot" when its
command's file name is `earshot`; it is checked for what makes the editor fail to start it: a
command that does not exist, arguments other than `--stdio` (or `acp`), a Zed entry without
`"type": "custom"` (Zed ignores it), a Toad file without a key Toad requires (Toad's home
screen fails).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

Status = Literal["ok", "note", "problem"]

TOAD_REQUIRED_KEYS = (
    "identity",
    "name",
    "short_name",
    "url",
    "protocol",
    "type",
    "author_name",
    "author_url",
    "publisher_name",
    "publisher_url",
    "description",
    "tags",
    "help",
    "run_command",
    "actions",
)
"""The keys of Toad's `Agent` schema (`toad/agent_schema.py`) that are not optional."""


@dataclass(frozen=True, slots=True)
class Finding:
    status: Status
    text: str
    fix: str = ""


def editor_findings(environ: Mapping[str, str]) -> list[Finding]:
    home = Path(environ.get("HOME") or Path.home())
    xdg = environ.get("XDG_CONFIG_HOME")
    config = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".config"
    findings: list[Finding] = []
    findings += _json_entries("Zed", config / "zed" / "settings.json", environ, zed=True)
    findings += _json_entries("JetBrains", home / ".jetbrains" / "acp.json", environ, zed=False)
    findings += _toad_findings(config / "toad" / "agents", environ)
    return findings


TOAD_AD_HOC = 'run `toad acp "earshot --stdio"` in your project'


def _toad_findings(unread: Path, environ: Mapping[str, str]) -> list[Finding]:
    """Toad's agent list (its package data) and an agent file Toad does not read."""
    executable = shutil.which("toad", path=environ.get("PATH"))
    bundled = toad_agents_dir(Path(executable)) if executable else None
    findings = _toad_entries(bundled, environ) if bundled is not None else []
    strays = [path for path, _ in _earshot_agent_files(unread)]
    if strays:
        where = f"into {bundled}" if bundled else "into Toad's toad/data/agents/"
        findings.append(
            Finding(
                "note",
                f"Toad: {', '.join(map(str, strays))} is not read (Toad 0.6.20 reads agents only "
                "from its own package data)",
                f"{TOAD_AD_HOC}, or copy editors/toad/earshot.toml {where}",
            )
        )
    if executable is None:
        findings.append(Finding("note", f"Toad: not installed (no toad on PATH); or {TOAD_AD_HOC}"))
    elif bundled is None:
        findings.append(
            Finding("note", f"Toad: cannot find the agents directory of {executable}", TOAD_AD_HOC)
        )
    elif not any(finding.status != "note" for finding in findings):
        findings.append(
            Finding(
                "note",
                f"Toad: earshot is not in Toad's agent list ({bundled})",
                f"{TOAD_AD_HOC}, or copy editors/toad/earshot.toml into {bundled}",
            )
        )
    return findings


def toad_agents_dir(executable: Path) -> Path | None:
    """The `toad/data/agents` directory of the Python environment the `toad` script runs in
    (its `#!` line names the interpreter; uv and pipx link the script into `~/.local/bin`)."""
    try:
        with executable.open("rb") as file:
            first = file.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    interpreter = Path(first[2:].decode(errors="replace").strip().split(" ")[0])
    environment = interpreter.parent.parent
    for found in sorted(environment.glob("lib/python3*/site-packages/toad/data/agents")):
        return found
    return None


def _json_entries(
    editor: str, path: Path, environ: Mapping[str, str], *, zed: bool
) -> list[Finding]:
    if not path.is_file():
        return [Finding("note", f"{editor}: no {path} (see editors/ for a ready-made entry)")]
    try:
        data: object = json.loads(strip_jsonc(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [Finding("problem", f"{editor}: {path} cannot be read: {exc}", "fix the file")]
    servers = cast("dict[str, Any]", data).get("agent_servers") if isinstance(data, dict) else None
    entries = [
        (name, cast("dict[str, Any]", entry))
        for name, entry in (
            cast("dict[str, Any]", servers) if isinstance(servers, dict) else {}
        ).items()
        if isinstance(entry, dict) and _is_earshot(cast("dict[str, Any]", entry).get("command"))
    ]
    if not entries:
        return [
            Finding(
                "note",
                f"{editor}: {path} has no agent_servers entry running earshot",
                f"add one: see editors/{'zed/settings.json' if zed else 'jetbrains/acp.json'}",
            )
        ]
    findings: list[Finding] = []
    for name, entry in entries:
        where = f"{editor} ({path}): agent_servers.{name}"
        raw_args = entry.get("args", [])
        args = (
            [str(a) for a in cast("list[object]", raw_args)] if isinstance(raw_args, list) else []
        )
        problem = _command_problem(str(entry["command"]), args, environ)
        if zed and entry.get("type") != "custom":
            findings.append(
                Finding(
                    "problem", f'{where} has no "type": "custom"', "add it: Zed ignores the entry"
                )
            )
        elif problem is not None:
            findings.append(Finding("problem", f"{where}: {problem[0]}", problem[1]))
        else:
            findings.append(Finding("ok", f"{where} runs {shlex.join([entry['command'], *args])}"))
    return findings


def _earshot_agent_files(directory: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The Toad agent files in `directory` whose `run_command` starts earshot."""
    found: list[tuple[Path, dict[str, Any]]] = []
    for path in sorted(directory.glob("*.toml")) if directory.is_dir() else []:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        commands = data.get("run_command")
        if isinstance(commands, dict) and any(
            str(command).strip() and _is_earshot(shlex.split(str(command))[0])
            for command in cast("dict[str, object]", commands).values()
        ):
            found.append((path, data))
    return found


def _toad_entries(directory: Path, environ: Mapping[str, str]) -> list[Finding]:
    findings: list[Finding] = []
    for path, data in _earshot_agent_files(directory):
        where = f"Toad ({path})"
        missing = [key for key in TOAD_REQUIRED_KEYS if key not in data]
        if missing:
            findings.append(
                Finding(
                    "problem",
                    f"{where} lacks {', '.join(missing)}: Toad's home screen fails on it",
                    "copy editors/toad/earshot.toml over it",
                )
            )
            continue
        runs = [str(c) for c in cast("dict[str, object]", data["run_command"]).values()]
        command, *args = shlex.split(runs[0])
        problem = _command_problem(command, args, environ)
        if problem is not None:
            findings.append(Finding("problem", f"{where}: {problem[0]}", problem[1]))
        else:
            findings.append(Finding("ok", f"{where} runs {runs[0]}"))
    return findings


def _is_earshot(command: object) -> bool:
    return isinstance(command, str) and Path(command).name == "earshot"


def _command_problem(
    command: str, args: list[str], environ: Mapping[str, str]
) -> tuple[str, str] | None:
    """What keeps the editor from starting `command args` as earshot's ACP server, and the fix."""
    found = shutil.which("earshot", path=environ.get("PATH"))
    hint = f"set it to {found}" if found else "install earshot (pipx install . in a checkout)"
    expanded = os.path.expanduser(command)
    if os.path.isabs(expanded):
        if not os.access(expanded, os.X_OK):
            return f"the command {command} does not exist or cannot run", hint
    elif shutil.which(expanded, path=environ.get("PATH")) is None:
        return f"{command} is not on PATH", hint
    if args not in (["--stdio"], ["acp"]):
        return f"arguments {args} instead of --stdio", 'set "args" to ["--stdio"]'
    return None


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (Zed's settings) made plain JSON."""
    return _TRAILING_COMMA.sub(r"\1", "".join(_without_comments(text)))


_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _without_comments(text: str) -> Iterator[str]:
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < length and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            yield text[index : end + 1]
            index = end + 1
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = length if newline < 0 else newline
        elif text.startswith("/*", index):
            close = text.find("*/", index + 2)
            index = length if close < 0 else close + 2
        else:
            yield char
            index += 1
