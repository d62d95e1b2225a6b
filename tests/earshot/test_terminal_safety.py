"""Terminal-safe output (issue 24, item 4), through the real command line: a session whose prompt
(so its title), tool output, model text, a child session's output and a written file carry
`ESC [ 2 J`, an OSC 52 clipboard write, a lone carriage return and U+202E is shown by every
command that prints it (`sessions list/show/tree/replay`, `audit`, `blame`, print mode itself)
with those characters escaped, never sent to the terminal; JSON output stays JSON that reads back
the same text; a repository settings key carrying them is escaped in print mode and `doctor`."""

from __future__ import annotations

import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from earshot.text_safety import SafeStream
from tests.earshot.support import Env, Run, earshot, make_env

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bash runs in the real sandbox"
)

HOSTILE = "A\x1b[2JB\x1b]52;c;cHduZWQ=\x07C\rOVER\u202eD"
"""Clear the screen, write the clipboard (OSC 52), overwrite the line (CR), reverse the text."""
SHOWN = r"A\x1b[2JB\x1b]52;c;cHduZWQ=\x07C"
"""How the start of HOSTILE shows; the CR shows as `\x0d`, or as a line break where a command
splits the text into lines (`splitlines` ends a line at a lone CR too), then `OVER\u202eD`."""
SHOWN_END = r"OVER\u202eD"
SHOWN_JSON = r"A\u001b[2JB\u001b]52;c;cHduZWQ=\u0007C\rOVER\u202eD"
"""HOSTILE in a settings key path: escaped as in JSON by the settings error."""
PRINTF = f"printf 'tool-%s\\n' '{HOSTILE}'"
"""A command holding HOSTILE, whose output is `tool-` + HOSTILE."""
_OBEYED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")


def _clean(text: str) -> bool:
    return _OBEYED.search(text) is None


def _strings(value: object) -> list[str]:
    """Every string in a parsed JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        items = cast("dict[str, object]", value).values()
        return [text for item in items for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in cast("list[object]", value) for text in _strings(item)]
    return []


def _call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


SCRIPT = [
    {"tool_calls": [_call("bash", "b1", command=PRINTF)]},
    {"tool_calls": [_call("write", "w1", path="notes.txt", content=f"line {HOSTILE}\n")]},
    {"tool_calls": [_call("task", "t1", description=f"look {HOSTILE}", prompt=f"child {HOSTILE}")]},
    {"tool_calls": [_call("read", "cr1", path="notes.txt")]},
    {"text": f"child says {HOSTILE}"},
    {"text": f"parent says {HOSTILE}"},
]
"""The parent runs the command, writes a file and starts a child, which reads the file."""


@dataclass
class Scenario:
    env: Env
    printed: Run
    """The print-mode run itself (text output)."""
    session: str
    child: str


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    env = make_env(tmp_path_factory.mktemp("terminal-safety"))
    script = env.root / "script.json"
    script.write_text(json.dumps({"turns": SCRIPT}), encoding="utf-8")
    env.write_settings(
        {
            "providers": {"fake": {"api": "scripted", "script": str(script)}},
            "model": "fake/scripted",
        }
    )

    async def build() -> Scenario:
        printed = await earshot(env, "--permission-mode", "auto", "-p", f"fix {HOSTILE}")
        assert printed.code == 0, printed.stderr
        listed = await earshot(env, "sessions", "list", "--all")
        ids = [line.split()[0] for line in listed.stdout.splitlines()]
        assert len(ids) == 2, listed.stdout
        tree = await earshot(env, "sessions", "tree", ids[0])
        child, session = (ids[0], ids[1]) if "child of" in tree.stdout else (ids[1], ids[0])
        return Scenario(env=env, printed=printed, session=session, child=child)

    return anyio.run(build)


def test_print_mode_shows_the_answer_and_progress_escaped(scenario: Scenario) -> None:
    printed = scenario.printed
    assert _clean(printed.stdout) and _clean(printed.stderr)
    assert f"parent says {SHOWN}" in printed.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("sessions", "list"), [f"fix {SHOWN}"]),
        (("sessions", "list", "--all"), [f"fix {SHOWN}", f"child {SHOWN}"]),
        (
            ("sessions", "show", "{session}"),
            [f"> fix {SHOWN}", f"tool-{SHOWN}", f"says {SHOWN}", SHOWN_END],
        ),
        (("sessions", "show", "{child}"), [f"line {SHOWN}", f"child says {SHOWN}", SHOWN_END]),
        (("sessions", "show", "{session}", "--branch", "current"), [f"tool-{SHOWN}", SHOWN_END]),
        (("sessions", "tree", "{session}"), [f"fix {SHOWN}", f"child {SHOWN}"]),
        # Replay renders a command's CR as the terminal did (`OVER...` over `tool-A`), with the
        # controls still escaped.
        (("sessions", "replay", "{session}"), [SHOWN_END + SHOWN[1:], f"parent says {SHOWN}"]),
        (("sessions", "replay", "{child}"), [f"line {SHOWN}", SHOWN_END]),
        (("audit",), [f"tool-%s\\n' '{SHOWN}"]),
        (("blame", "notes.txt"), [f"line {SHOWN}", SHOWN_END]),
    ],
)
async def test_every_command_shows_hostile_text_escaped(
    scenario: Scenario, args: tuple[str, ...], expected: list[str]
) -> None:
    argv = [arg.format(session=scenario.session, child=scenario.child) for arg in args]
    run = await earshot(scenario.env, *argv)
    assert run.code == 0, run.stderr
    assert _clean(run.stdout), run.stdout
    assert _clean(run.stderr), run.stderr
    for text in expected:
        assert text in run.stdout, run.stdout


async def test_json_output_stays_json_and_reads_back_the_same_text(scenario: Scenario) -> None:
    for args in (("audit", "--json"), ("blame", "notes.txt", "--json")):
        run = await earshot(scenario.env, *args)
        assert run.code == 0, run.stderr
        assert _clean(run.stdout), run.stdout
        assert any(HOSTILE in text for text in _strings(json.loads(run.stdout))), args
    printed = await earshot(
        scenario.env, "--output-format", "json", "--resume", scenario.session, "-p", "again"
    )
    assert _clean(printed.stdout)
    assert any(HOSTILE in text for text in _strings(printed.lines()))


async def test_a_repository_settings_key_is_escaped(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.write_settings({"model": "fake/scripted", "providers": {"fake": {"api": "scripted"}}})
    project = env.workspace / ".earshot"
    project.mkdir()
    key = f"{HOSTILE}\nFORGED: settings are fine"
    (project / "settings.json").write_text(json.dumps({key: 1}), encoding="utf-8")
    printed = await earshot(env, "-p", "hello")
    doctor = await earshot(env, "doctor")
    assert printed.code == 2
    for text in (printed.stderr, doctor.stdout, doctor.stderr):
        assert _clean(text), text
        assert not any(line.startswith("FORGED") for line in text.splitlines()), text
    for text in (printed.stderr, doctor.stdout):
        assert f"{SHOWN_JSON}\\nFORGED: settings are fine: unknown key" in text, text


def test_the_stream_keeps_crlf_and_escapes_a_lone_cr_even_across_writes() -> None:
    inner = io.StringIO()
    stream = SafeStream(inner)
    for chunk in ("one\r", "\ntwo\r", "over\u202e\t", "end\r"):
        stream.write(chunk)
    stream.flush()
    assert inner.getvalue() == "one\r\ntwo\\x0dover\\u202e\tend\\x0d"


def test_the_json_stream_writes_the_same_document_inert() -> None:
    document = {"text": HOSTILE + "\x85\u2028\u2066"}
    inner = io.StringIO()
    SafeStream(inner, json=True).write(json.dumps(document, ensure_ascii=False))
    assert _clean(inner.getvalue()) and "\u2028" not in inner.getvalue()
    assert json.loads(inner.getvalue()) == document
