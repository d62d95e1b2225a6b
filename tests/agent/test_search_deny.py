"""Read deny rules hold for the search tools too: grep never shows a denied file's content, and
grep, glob and ls never show that a denied path exists. Tested on the tools with a real
`PermissionGate`, and through a session whose scripted model tries each tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.permissions import PermissionGate, PermissionRules
from agent.session import SessionOptions, create_session
from agent.settings import load_settings
from agent.tools import ToolServices
from agent.tools.edit import edit_tool
from agent.tools.glob_tool import glob_tool
from agent.tools.grep import grep_tool
from agent.tools.ls import ls_tool
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from tests.agent.loop_support import collect, env, results_of
from tests.agent.tools_harness import Harness, harness, text_of

DENY = ["Read(./.env)", "Read(*.pem)", "Read(./private/)"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    files = {
        ".env": "TOKEN=SECRET123\n",
        "app.py": "print('SECRET in code')\n",
        "certs/server.pem": "SECRET pem body\n",
        "private/notes.txt": "SECRET plans\n",
        "private/deeper/more.txt": "SECRET more\n",
        "public/private.txt": "SECRET but allowed: only ./private is denied\n",
        "ignored.log": "SECRET ignored\n",
    }
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    (root / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (root / "env-link").symlink_to(root / ".env")
    return root.resolve()


@pytest.fixture
def h(tree: Path) -> Harness:
    gate = PermissionGate(PermissionRules.parse(deny=DENY), cwd=tree, roots=(tree,))
    h = harness(tree)
    h.ctx.services = ToolServices(
        read_denied=gate.read_denied, read_deny_globs=gate.read_deny_globs
    )
    return h


def test_the_gate_answers_whether_a_path_is_read_denied(tree: Path) -> None:
    gate = PermissionGate(PermissionRules.parse(deny=DENY), cwd=tree, roots=(tree,))
    assert gate.read_denied(tree / ".env")
    assert gate.read_denied(tree / "env-link")  # resolved to .env
    assert gate.read_denied(tree / "certs" / "server.pem")
    assert gate.read_denied(tree / "private")
    assert gate.read_denied(tree / "private" / "deeper" / "more.txt")
    assert not gate.read_denied(tree / "public" / "private.txt")
    assert not gate.read_denied(tree / "app.py")
    assert gate.read_deny_globs() == ("*.pem",)
    # Ask and allow rules, or Edit deny rules, do not hide anything from a read.
    other = PermissionRules.parse(ask=["Read(./.env)"], allow=["Read"], deny=["Edit(./.env)"])
    assert not PermissionGate(other, cwd=tree, roots=(tree,)).read_denied(tree / ".env")


@pytest.mark.parametrize("context", [0, 2])
async def test_grep_content_never_shows_a_denied_file(h: Harness, context: int) -> None:
    text = text_of(await h.run(grep_tool, pattern="SECRET", context=context))
    assert "SECRET123" not in text and ".env" not in text
    assert "pem" not in text and "plans" not in text and "more" not in text
    assert "app.py" in text and "public/private.txt" in text
    assert not text.startswith("--") and "--\n--" not in text and not text.endswith("--")


async def test_grep_other_modes_and_paths_never_show_a_denied_file(h: Harness, tree: Path) -> None:
    for mode in ("files_with_matches", "count"):
        text = text_of(await h.run(grep_tool, pattern="SECRET", output_mode=mode))
        lines = text.splitlines()
        assert [line.split(":")[0] for line in lines] == ["app.py", "public/private.txt"], mode
    assert text_of(await h.run(grep_tool, pattern="TOKEN")) == "No matches found."
    # Asking for hidden files by glob, or searching the denied directory's parent by absolute
    # path, changes nothing.
    assert text_of(await h.run(grep_tool, pattern="SECRET", glob=".env")) == "No matches found."
    text = text_of(await h.run(grep_tool, pattern="SECRET", path=str(tree)))
    assert "SECRET123" not in text and "plans" not in text and "app.py" in text


async def test_glob_never_lists_a_denied_path(h: Harness) -> None:
    text = text_of(await h.run(glob_tool, pattern="**/*"))
    names = sorted(text.splitlines())
    assert names == [".gitignore", "app.py", "public/private.txt"]
    assert text_of(await h.run(glob_tool, pattern=".env*")) == "No files found."
    assert text_of(await h.run(glob_tool, pattern="*.txt", path="private")) == "No files found."


async def test_ls_never_lists_a_denied_entry(h: Harness, tree: Path) -> None:
    for show_ignored in (False, True):
        text = text_of(await h.run(ls_tool, show_ignored=show_ignored))
        entries = [line.strip() for line in text.splitlines()[1:]]
        assert ".env" not in entries and "env-link" not in entries
        assert "private/" not in entries
        assert "app.py" in entries and "public/" in entries and "certs/" in entries
        assert ".env" not in text and "env-link" not in text
    certs = text_of(await h.run(ls_tool, path="certs"))
    assert "server.pem" not in certs and certs.endswith("(no entries)")


async def test_without_a_read_check_the_search_tools_reveal_nothing(tree: Path) -> None:
    """A tool given no `read_denied` (run outside a session, or a service forgotten where a
    session is wired) fails closed: no content, no name, no preview. The check once defaulted
    to "nothing is hidden", and grep then also searched a hard link to a denied file."""
    (tree / "linked.txt").hardlink_to(tree / ".env")
    h = harness(tree)
    h.ctx.services = ToolServices()  # no read check
    for mode in ("content", "files_with_matches", "count"):
        text = text_of(await h.run(grep_tool, pattern="SECRET|TOKEN", output_mode=mode))
        assert text == "No matches found.", mode
    assert text_of(await h.run(glob_tool, pattern="**/*")) == "No files found."
    assert text_of(await h.run(ls_tool)).endswith("(no entries)")
    # An edit's proposed diff reads nothing the check has not allowed.
    card = h.ui(edit_tool, path=".env", old_string="TOKEN", new_string="KEY")
    assert "SECRET123" not in str(card)


async def test_a_session_with_a_read_deny_rule_leaks_nothing_through_search_tools(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    (where.cwd / ".env").write_text("TOKEN=SECRET123\n", encoding="utf-8")
    (where.cwd / "main.py").write_text("TOKEN = load()  # SECRET lives in .env\n", "utf-8")
    config = tmp_path / "config"
    (config / "earshot").mkdir(parents=True)
    (config / "earshot" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./.env)"]}}), encoding="utf-8"
    )
    settings = load_settings(where.cwd, environ={}, config_home=config)
    calls = [
        ScriptedCall(name="read", arguments={"path": ".env"}),
        ScriptedCall(name="grep", arguments={"pattern": "SECRET"}),
        ScriptedCall(name="grep", arguments={"pattern": "TOKEN", "output_mode": "count"}),
        ScriptedCall(name="glob", arguments={"pattern": "**/*"}),
        ScriptedCall(name="ls", arguments={}),
        ScriptedCall(
            name="task",
            arguments={"description": "look", "prompt": "grep for SECRET"},
        ),
    ]
    sub_calls = [ScriptedCall(name="grep", arguments={"pattern": "SECRET"})]
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=calls),
            ScriptedTurn(tool_calls=sub_calls),  # the subagent
            ScriptedTurn(text="subagent done"),
            ScriptedTurn(text="done"),
        ]
    )
    session = await create_session(
        store=where.store,
        cwd=where.cwd,
        options=SessionOptions(model_name="scripted/test", mode="auto"),
        model_factory=lambda name: model,
        settings=settings,
        data_dir=where.data,
    )
    await collect(session.run_turn("find the secret"))
    results = results_of(session.history())
    assert results["call_1_1"].is_error and "denied" in results["call_1_1"].text
    grep, count, glob, ls = (results[f"call_1_{n}"].text for n in (2, 3, 4, 5))
    assert grep == "main.py:1:TOKEN = load()  # SECRET lives in .env"
    assert count == "main.py:1"
    assert glob == "main.py"
    assert "main.py" in ls and ".env" not in ls
    # The subagent's grep is filtered too.
    sub_requests = [
        r for r in model.requests if r.messages and r.messages[0].text == "grep for SECRET"
    ]
    assert sub_requests, "the subagent ran"
    everything = json.dumps([repr(r.messages) for r in model.requests])
    assert "SECRET123" not in everything
    await session.aclose()
