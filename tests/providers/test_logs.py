"""`providers.logs`, earshot's one logging module: structlog loads at the first line logged, with
the front end's configuration already applied, for every package's loggers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CODE = """
import sys, json
from providers.logs import configure, get_logger
from sessions.tree import parse_lines
agent_log = get_logger("agent.example")
configure(environ={"EARSHOT_LOG_LEVEL": "warning"}, stream=sys.stdout)
imported_early = "structlog" in sys.modules or "rich" in sys.modules
agent_log.info("below the level")
agent_log.warning("first", n=1)
parse_lines([(1, "not json")], "x.jsonl")
print(json.dumps({"imported_early": imported_early}))
"""


def test_lines_are_json_at_the_configured_level_and_structlog_loads_at_the_first() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    first, torn, last = (json.loads(line) for line in result.stdout.splitlines())
    assert (first["event"], first["n"], first["level"]) == ("first", 1, "warning")
    assert "timestamp" in first
    assert (torn["event"], torn["line"], torn["level"]) == (
        "session line is not JSON, skipped",
        1,
        "warning",
    )
    assert last == {"imported_early": False}
    assert result.stderr == ""


def test_the_log_file_variable_sends_lines_to_a_file(tmp_path: Path) -> None:
    path = tmp_path / "earshot.log"
    code = (
        "from providers.logs import configure, get_logger\n"
        f"configure(environ={{'EARSHOT_LOG_FILE': {str(path)!r}}})\n"
        "get_logger('x').error('failed', exc_info=ValueError('bad'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
    line = json.loads(path.read_text(encoding="utf-8"))
    assert line["event"] == "failed" and line["level"] == "error"
    assert "ValueError: bad" in line["exception"]


TERMINAL_CODE = """
import io, sys
from providers.logs import configure, get_logger
class Terminal(io.StringIO):
    def isatty(self):
        return True
terminal, pipe = Terminal(), io.StringIO()
log = get_logger("x")
configure(stream=terminal)
log.warning("for a person", n=1)
configure(stream=pipe)  # the same logger follows: nothing is cached
log.warning("for a program", n=2)
sys.stdout.write(terminal.getvalue() + "---\\n" + pipe.getvalue())
"""


def test_lines_on_a_terminal_are_plain_text_and_json_elsewhere() -> None:
    result = subprocess.run(
        [sys.executable, "-c", TERMINAL_CODE],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    shown, piped = result.stdout.split("---\n")
    [line] = shown.splitlines()
    assert not line.startswith("{")  # JSON on a terminal looks like a protocol message
    assert "[warning" in line and "for a person" in line and "n=1" in line
    assert json.loads(piped) | {"timestamp": None} == {
        "event": "for a program",
        "n": 2,
        "level": "warning",
        "timestamp": None,
    }
