"""`earshot audit`, `earshot blame` and `earshot sessions replay` against sessions built for real:
the scripted model through `earshot -p` (subprocesses), a rewind and a fork through the sessions
API, and `earshot undo`. One scenario, built once for the module, is checked by every test.

The scenario, in one workspace:
1. run 1 (accept-edits, priced model, JSON output): writes notes.py; `echo hello` (allowed by a
   user rule, sandboxed); `rm -rf scratch` (refused by a user deny rule); `cat missing.txt`
   (allowed by a rule, exits 1); a fetch of a loopback address (refused: print mode cannot ask);
   `ls` (blocked by a pre_tool_use hook); an answer holding `<script>` and an escape sequence;
2. the session is rewound (sessions API) to the result of `echo hello`;
3. run 3 resumes it (auto mode, sandbox off in settings): `echo extra >> notes.py`;
4. run 2, a new session: edits line 2, then line 3;
5. `earshot undo` undoes run 2's last batch (the line-3 edit);
6. run 2's session is forked (sessions API).
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from providers.types import ToolResultPart
from sessions import MessageEntry, SessionStore
from tests.earshot.support import Env, Run, earshot, make_env

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the scenario runs commands in the real sandbox"
)

SCRIPT_TEXT = "All done <script>alert('owned')</script> \x1b[2J\x1b]0;title\x07"
PRICE = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
"""USD per million tokens, set for the scripted model in the settings."""


def _turn(
    *calls: dict[str, Any],
    text: str = "",
    usage: tuple[int, int] = (1000, 50),
    cache: tuple[int, int] = (0, 0),
) -> Any:
    counts = {"input_tokens": usage[0], "output_tokens": usage[1]}
    counts |= {"cached_input_tokens": cache[0], "cache_write_tokens": cache[1]}
    turn: dict[str, Any] = {"usage": counts}
    if calls:
        turn["tool_calls"] = list(calls)
    if text:
        turn["text"] = text
    return turn


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


RUN_1 = [
    _turn(_call("write", path="notes.py", content="one\ntwo\nthree\n")),
    _turn(_call("bash", command="echo hello")),
    _turn(_call("bash", command="rm -rf scratch")),
    _turn(_call("bash", command="cat missing.txt")),
    _turn(_call("fetch", url="http://127.0.0.1:9/secret")),
    _turn(_call("ls", path=".")),
    _turn(text=SCRIPT_TEXT, usage=(2000, 100)),
]
RUN_3 = [_turn(_call("bash", command="echo extra >> notes.py")), _turn(text="appended")]
CACHED = (600, 100)
"""Run 2's calls read 600 of their 1,000 input tokens from the prompt cache and write 100."""
RUN_2 = [
    _turn(_call("read", path="notes.py"), cache=CACHED),
    _turn(_call("edit", path="notes.py", old_string="two\n", new_string="TWO\n"), cache=CACHED),
    _turn(_call("read", path="notes.py"), cache=CACHED),
    _turn(_call("edit", path="notes.py", old_string="three\n", new_string="THREE\n"), cache=CACHED),
    _turn(text="edited", cache=CACHED),
]


@dataclass
class Scenario:
    env: Env
    settings_file: Path
    first: str
    """Run 1's session (rewound, then resumed by run 3)."""
    second: str
    forked: str
    run_1: Run

    async def earshot(self, *args: str) -> Run:
        return await earshot(self.env, *args)

    async def json(self, *args: str) -> Any:
        run = await self.earshot(*args)
        assert run.code == 0, run.stderr
        return json.loads(run.stdout)


def _settings(env: Env, script: list[Any], **extra: Any) -> Path:
    path = env.root / f"script-{len(list(env.root.glob('script-*')))}.json"
    path.write_text(json.dumps({"turns": script}), encoding="utf-8")
    return env.write_settings(
        {
            "model": "fake/scripted",
            "providers": {"fake": {"api": "scripted", "script": str(path)}},
            "models": {"fake/scripted": {"cost": PRICE}},
            "permissions": {"allow": ["Bash(echo *)", "Bash(cat *)"], "deny": ["Bash(rm *)"]},
            "hooks": {
                "pre_tool_use": [{"matcher": "ls", "command": "echo 'no listing here' >&2; exit 2"}]
            },
            **extra,
        }
    )


async def _build(env: Env) -> Scenario:
    store = SessionStore(env.data_home / "earshot" / "sessions")
    settings_file = _settings(env, RUN_1)
    run_1 = await earshot(
        env, "--permission-mode", "accept-edits", "--output-format", "json", "-p", "first"
    )
    assert run_1.code == 3, run_1.stderr  # calls were refused
    first = run_1.lines()[0]["session_id"]

    session = await store.open(first)
    try:
        echo_result = next(
            entry.id
            for entry in session.entries
            if isinstance(entry, MessageEntry)
            and any(
                isinstance(part, ToolResultPart) and part.text.strip() == "hello"
                for part in entry.message.parts
            )
        )
        await session.rewind(echo_result)
    finally:
        await session.aclose()

    _settings(env, RUN_3, sandbox={"enabled": False})
    run_3 = await earshot(env, "--resume", first, "--permission-mode", "auto", "-p", "again")
    assert run_3.code == 0, run_3.stderr

    _settings(env, RUN_2)
    run_2 = await earshot(
        env, "--permission-mode", "accept-edits", "--output-format", "json", "-p", "second"
    )
    assert run_2.code == 0, run_2.stderr
    second = run_2.lines()[0]["session_id"]
    undone = await earshot(env, "undo")
    assert undone.code == 0 and "notes.py" in undone.stdout, undone.stdout + undone.stderr

    fork = await store.fork(second)
    forked = fork.id
    await fork.aclose()
    return Scenario(env, settings_file, first, second, forked, run_1)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed; scripts/test installs it")
    env = make_env(tmp_path_factory.mktemp("audit"))
    return anyio.run(_build, env)


# ------------------------------------------------------------------------------ print mode


def test_print_mode_result_line_says_turns_tokens_cost_and_time(scenario: Scenario) -> None:
    result = scenario.run_1.lines()[-1]
    assert result["kind"] == "result" and result["denied"] == 2  # a hook is not the gate
    assert result["turns"] == len(RUN_1)
    usage = result["usage"]
    assert usage["input_tokens"] == 6 * 1000 + 2000
    assert usage["output_tokens"] == 6 * 50 + 100
    expected = (8000 * PRICE["input"] + 400 * PRICE["output"]) / 1_000_000
    assert result["cost_usd"] == pytest.approx(expected)
    assert isinstance(result["duration_ms"], int) and result["duration_ms"] > 0


# ----------------------------------------------------------------------------------- audit


async def test_audit_lists_commands_writes_fetches_and_who_decided(scenario: Scenario) -> None:
    report = await scenario.json("audit", "--json")
    rows = report["rows"]
    keys = [(row["session_id"], row["entry_id"], row["call_id"]) for row in rows]
    assert len(keys) == len(set(keys)), "a fork's copied calls are audited once"
    assert {row["session_id"] for row in rows} == {scenario.first, scenario.second}

    def row(what: str) -> dict[str, Any]:
        [found] = [r for r in rows if r["what"] == what]
        return found

    echo = row("echo hello")
    assert (echo["kind"], echo["status"], echo["exit_code"], echo["sandbox"]) == (
        "command", "completed", 0, "confined"
    )  # fmt: skip
    [allowed] = echo["decisions"]
    assert allowed["allowed"] is True and allowed["rule"] == "Bash(echo *)"
    assert allowed["rule_file"] == str(scenario.settings_file)
    assert allowed["by"] == f"user rule Bash(echo *) in {scenario.settings_file}"

    failing = row("cat missing.txt")
    assert (failing["status"], failing["exit_code"], failing["sandbox"]) == (
        "failed",
        1,
        "confined",
    )

    removal = row("rm -rf scratch")
    assert removal["status"] == "denied" and removal["exit_code"] is None
    [denied] = removal["decisions"]
    assert denied["allowed"] is False and denied["rule"] == "Bash(rm *)"
    assert denied["source"] == "user" and denied["mode"] == "accept-edits"

    fetch = row("http://127.0.0.1:9/secret")
    assert fetch["kind"] == "fetch" and fetch["status"] == "denied"
    assert fetch["decisions"][0]["source"] == "prompt"
    assert fetch["decisions"][0]["answer"] == "reject_once"
    assert "print mode" in fetch["decisions"][0]["reason"]

    [listing] = [r for r in rows if r["tool"] == "ls"]
    assert listing["status"] == "denied"
    assert listing["decisions"][0]["source"] == "hook"
    assert "no listing here" in listing["decisions"][0]["by"]

    appended = row("echo extra >> notes.py")
    assert appended["sandbox"] == "none" and appended["exit_code"] == 0  # sandbox off: flagged

    writes = [r for r in rows if r["kind"] == "write"]
    assert [(w["tool"], w["session_id"], w["undone"]) for w in writes] == [
        ("write", scenario.first, False),
        ("edit", scenario.second, False),
        ("edit", scenario.second, True),
    ]
    assert not any(w["outside_project"] for w in writes)
    assert all(w["decisions"][0]["by"] == "mode accept-edits" for w in writes)

    # Every call of the three runs, once (the fork's copy is not counted again, the branch run 1
    # left by its rewind still is), cache reads and writes at the cache prices.
    spend = report["spend"]
    usage = spend["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (15_000, 750)
    assert (usage["cached_input_tokens"], usage["cache_write_tokens"]) == (3_000, 500)
    assert spend["cache_read_share"] == 0.2
    fresh = 15_000 - 3_000 - 500
    expected = fresh * 3.0 + 3_000 * 0.3 + 500 * 3.75 + 750 * 15.0
    assert spend["cost_usd"] == pytest.approx(expected / 1_000_000)


async def test_audit_table_since_and_all(scenario: Scenario) -> None:
    table = await scenario.earshot("audit")
    assert table.code == 0, table.stderr
    assert "NOT sandboxed" in table.stdout and "sandboxed" in table.stdout
    assert f"user rule Bash(rm *) in {scenario.settings_file}" in table.stdout
    assert "undone later" in table.stdout
    assert "refusals" in table.stdout.splitlines()[-2]
    assert "20% read from the prompt cache" in table.stdout.splitlines()[-1]

    future = await scenario.json("audit", "--json", "--since", "2999-01-01")
    assert future["rows"] == [] and future["spend"]["usage"]["input_tokens"] == 0
    recent = await scenario.json("audit", "--json", "--since", "1d")
    assert len(recent["rows"]) > 5
    bad = await scenario.earshot("audit", "--since", "last tuesday")
    assert bad.code == 2 and "--since" in bad.stderr

    elsewhere = scenario.env.root / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    none_here = await scenario.json("--cwd", str(elsewhere), "audit", "--json")
    assert none_here["rows"] == []
    everywhere = await scenario.json("--cwd", str(elsewhere), "audit", "--all", "--json")
    assert {row["session_id"] for row in everywhere["rows"]} == {scenario.first, scenario.second}


# ----------------------------------------------------------------------------------- blame


async def test_blame_after_undo_names_the_call_that_wrote_each_line(scenario: Scenario) -> None:
    notes = scenario.env.workspace / "notes.py"
    assert notes.read_text(encoding="utf-8") == "one\nTWO\nthree\nextra\n"
    blamed = await scenario.json("blame", "notes.py", "--json")
    lines = blamed["lines"]
    assert [line["text"] for line in lines] == ["one", "TWO", "three", "extra"]
    origins = [line["origin"] for line in lines]
    assert origins[0]["session_id"] == scenario.first and origins[0]["tool"] == "write"
    assert origins[0]["turn"] == 1 and origins[0]["prompt"] == "first"
    # The line-3 edit was undone: "three" is the write's again, not the undone edit's.
    assert origins[2] == origins[0]
    assert origins[1]["session_id"] == scenario.second and origins[1]["tool"] == "edit"
    assert origins[1]["call_id"] == "call_2_1" and origins[1]["certain"] is True
    # A command's writes are not recorded: the line is put down to it, flagged as uncertain.
    assert origins[3]["session_id"] == scenario.first and origins[3]["tool"] == "bash"
    assert origins[3]["certain"] is False and origins[3]["turn"] == 2


async def test_blame_says_not_written_by_earshot_for_outside_changes(scenario: Scenario) -> None:
    copy = scenario.env.workspace / "notes.py"
    original = copy.read_text(encoding="utf-8")
    try:
        copy.write_text("zero\n" + original.replace("TWO", "two (mine)"), encoding="utf-8")
        blamed = await scenario.json("blame", "notes.py", "--json")
        table = await scenario.earshot("blame", "notes.py")
    finally:
        copy.write_text(original, encoding="utf-8")
    origins = [line["origin"] for line in blamed["lines"]]
    assert origins[0] is None and origins[2] is None  # the user's lines
    assert origins[1]["tool"] == "write" and origins[3]["tool"] == "write"
    assert table.code == 0
    first_line = table.stdout.splitlines()[0]
    assert first_line.startswith("(not written by earshot)") and first_line.endswith("1) zero")
    untouched = scenario.env.workspace / "untouched.txt"
    untouched.write_text("mine\n", encoding="utf-8")
    alone = await scenario.json("blame", "untouched.txt", "--json")
    assert alone["lines"] == [{"line": 1, "text": "mine", "origin": None}]
    missing = await scenario.earshot("blame", "nope.txt")
    assert missing.code == 1 and "nope.txt" in missing.stderr


# ---------------------------------------------------------------------------------- replay


async def test_replay_shows_the_session_as_it_happened(scenario: Scenario) -> None:
    run = await scenario.earshot("sessions", "replay", scenario.first[:18])
    assert run.code == 0, run.stderr
    text = run.stdout
    order = [
        "> first",
        "Write notes.py",
        "+three",
        "$ echo hello",
        "exit 0, in the sandbox",
        "    hello",
        "permission refused: user rule Bash(rm *)",
        "exit 1, in the sandbox",
        "No such file or directory",
        "permission refused: asked, answer reject_once",
        "pre_tool_use hook (no listing here)",
        "All done",
        "rewound to turn 1 (first)",
        "> again",
        "$ echo extra >> notes.py",
        "not sandboxed",
    ]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "\x1b" not in text and "\\x1b[2J" in text and "\\x07" in text
    assert "session so far:" in text and "$0.0" in text

    second = await scenario.earshot("sessions", "replay", scenario.second)
    assert "-two" in second.stdout and "+TWO" in second.stdout
    assert "its batch was undone later" in second.stdout
    forked = await scenario.earshot("sessions", "replay", scenario.forked)
    assert f"forked from session {scenario.second}" in forked.stdout
    assert (await scenario.earshot("sessions", "replay", "nosuch")).code == 2


async def test_replay_html_is_self_contained_and_escapes_the_transcript(
    scenario: Scenario,
) -> None:
    out = scenario.env.root / "first.html"
    run = await scenario.earshot("sessions", "replay", scenario.first, "--html", str(out))
    assert run.code == 0, run.stderr
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    lowered = page.lower()
    assert "<script" not in lowered
    assert "&lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt;" in page
    assert "\x1b" not in page and "\\x1b[2J" in page
    assert 'http-equiv="content-security-policy"' in lowered and "default-src 'none'" in page
    for external in ("src=", "href=", "@import", "url("):
        assert external not in lowered
    for shown in ("echo hello", "Bash(rm *)", "rewound to turn 1", "no listing here"):
        assert shown in page


# ------------------------------------------------------------------ ids and pipes, every command


async def test_the_short_id_audit_prints_is_taken_by_every_command(scenario: Scenario) -> None:
    table = await scenario.earshot("audit")
    short = scenario.second[:13]
    assert f"{short} t" in table.stdout  # what audit (and blame) print
    for command in (("sessions", "show"), ("sessions", "tree"), ("sessions", "replay")):
        run = await scenario.earshot(*command, short)
        assert run.code == 0, (command, run.stderr)
        assert scenario.second in run.stdout or "> second" in run.stdout, command
    branch = await scenario.earshot("sessions", "show", short, "--branch", "current")
    assert branch.code == 0 and "> second" in branch.stdout
    # A prefix of both sessions is refused the same way by every command, naming both.
    common = next(
        scenario.first[:n]
        for n in range(len(scenario.first), 0, -1)
        if scenario.second.startswith(scenario.first[:n])
    )
    for command in (("sessions", "show"), ("sessions", "tree"), ("sessions", "replay")):
        run = await scenario.earshot(*command, common)
        assert run.code == 2 and "matches several sessions" in run.stderr, command
        assert scenario.first in run.stderr and scenario.second in run.stderr


async def test_a_reader_that_goes_away_ends_a_command_quietly(scenario: Scenario) -> None:
    """`earshot models | head -1`, `doctor | head`, `blame --json | head -c 400`: the reader
    closes the pipe; the command exits as SIGPIPE would have it (141), without a traceback."""
    for command in (
        ("models",),
        ("doctor",),
        ("blame", "notes.py", "--json"),
        ("sessions", "replay", scenario.first),
    ):
        run = await earshot(scenario.env, *command, reader_gone=True)
        assert run.code == 141, (command, run.code, run.stderr)
        assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, command
