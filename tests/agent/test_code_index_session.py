"""The code index in a session, with the scripted model: `repo_map` ranks the definitions of the
conversation's files first, `repoMap` puts a map centred on the prompt's files in the first
request (and keeps it), and indexing starts without holding up the turn."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from agent.codeindex import CodeIndex, default_database
from agent.events import AgentEvent, ToolCallFinished
from agent.session import AgentSession, SessionOptions, create_session
from agent.settings import CodeConfig, Settings
from agent.tasks import SessionTasks
from providers.types import JsonValue
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import SessionStore
from tests.agent.loop_support import of

FILES = {
    "core/store.py": "class SessionStore:\n    def append_entry(self) -> None:\n        pass\n",
    "core/use.py": "from core.store import SessionStore\n\ndef use_store():\n"
    "    return SessionStore()\n",
    "core/other.py": "from core.store import SessionStore\n\ndef other_store():\n"
    "    return SessionStore()\n\nclass Unrelated:\n    pass\n",
    "lib/helpers.py": "def helper_one():\n    return 1\n\ndef helper_two():\n    return 2\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for name, content in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root.resolve()


def call(name: str, arguments: dict[str, JsonValue], call_id: str) -> ScriptedTurn:
    return ScriptedTurn(tool_calls=[ScriptedCall(name=name, arguments=arguments, id=call_id)])


@asynccontextmanager
async def session(
    project: Path, model: ScriptedModel, *, repo_map: bool = False
) -> AsyncGenerator[AgentSession]:
    """A session in its block (the refreshes run there), closed at the block's end."""
    async with SessionTasks() as tasks:
        yield await create_session(
            store=SessionStore(project.parent / "data" / "sessions"),
            cwd=project,
            options=SessionOptions(model_name="scripted/test", mode="yolo"),
            model_factory=lambda name: model,
            settings=Settings(code=CodeConfig(repo_map=repo_map)),
            data_dir=project.parent / "data",
            tasks=tasks,
        )


async def run(agent: AgentSession, prompt: str = "go") -> list[AgentEvent]:
    with anyio.fail_after(60):
        return [event async for event in agent.run_turn(prompt)]


def sections(map_text: str) -> list[str]:
    """The file names of a map, in order (a file's section starts with `path:`)."""
    return [line[:-1] for line in map_text.splitlines() if line.endswith(".py:")]


async def test_repo_map_ranks_the_conversations_files_first(project: Path) -> None:
    turns: Sequence[ScriptedTurn] = [
        call("read", {"path": "lib/helpers.py"}, "r1"),
        call("repo_map", {}, "m1"),
        ScriptedTurn(text="done"),
    ]
    async with session(project, ScriptedModel(list(turns))) as agent:
        finished = of(ToolCallFinished, await run(agent))
    by_id = {event.call_id: event for event in finished}
    text = by_id["m1"].result.text
    assert by_id["m1"].status == "completed"
    order = sections(text)
    # Without the conversation, core/store.py (referred to by two files) would rank first.
    assert order[0] == "lib/helpers.py"
    assert "core/store.py" in order
    assert "def helper_one():" in text


async def test_search_code_finds_a_definition_in_a_session(project: Path) -> None:
    turns = [call("search_code", {"query": "append entry"}, "s1"), ScriptedTurn(text="done")]
    async with session(project, ScriptedModel(turns)) as agent:
        [finished] = of(ToolCallFinished, await run(agent))
    assert finished.result.text.splitlines()[0].startswith("core/store.py (score")


async def test_repo_map_setting_puts_a_map_centred_on_the_prompts_files_in_the_first_request(
    project: Path,
) -> None:
    # A warm cache, as a previous session leaves it.
    index = CodeIndex(project, database=default_database(project, project.parent / "data"))
    await index.refresh()
    await index.aclose()
    model = ScriptedModel([ScriptedTurn(text="first"), ScriptedTurn(text="second")])
    async with session(project, model, repo_map=True) as agent:
        await run(agent, "please look at lib/helpers.py")
        await run(agent, "and now?")
    first, second = model.requests
    assert "<repository_map>" in first.system
    block = first.system.split("<repository_map>", 1)[1]
    assert sections(block)[0] == "lib/helpers.py"
    # The same map stays for the session's later requests (a stable prompt caches).
    assert second.system == first.system


async def test_without_the_setting_no_map_goes_in_and_nothing_is_indexed_unasked(
    project: Path,
) -> None:
    model = ScriptedModel([ScriptedTurn(text="first")])
    async with session(project, model) as agent:
        await run(agent, "look at lib/helpers.py")
    assert "<repository_map>" not in model.requests[0].system
    assert not default_database(project, project.parent / "data").exists()


async def test_with_a_cold_cache_the_map_comes_once_the_background_index_has_it(
    project: Path,
) -> None:
    model = ScriptedModel([ScriptedTurn(text="first"), ScriptedTurn(text="second")])
    async with session(project, model, repo_map=True) as agent:
        await run(agent, "look at lib/helpers.py")
        # The first turn never waits for indexing; the refresh it started goes on after it.
        host = agent._setup.code_index  # pyright: ignore[reportPrivateUsage]
        assert host is not None
        index = await host.ready()
        assert index.refreshed
        await run(agent, "and now?")
    second = model.requests[1].system
    assert "<repository_map>" in second
    assert sections(second.split("<repository_map>", 1)[1])[0] == "lib/helpers.py"


async def test_a_large_refresh_under_way_is_announced_once(project: Path) -> None:
    from agent.code.index_host import NOTICE_FROM, CodeIndexHost
    from agent.codeindex.index import IndexProgress
    from agent.events import Notice

    notices: list[AgentEvent] = []
    async with SessionTasks() as tasks:
        host = CodeIndexHost(project, data_dir=project.parent / "data", repo_map=True, tasks=tasks)
        try:
            index = await host.index()
            index.status = IndexProgress("indexing", 10, NOTICE_FROM - 1)
            host.announce(notices.append)  # a small refresh is over at once: nothing to say
            assert notices == []
            index.status = IndexProgress("indexing", 10, 20_000)
            host.announce(notices.append)
            host.announce(notices.append)
        finally:
            await host.aclose()
    [notice] = notices
    assert isinstance(notice, Notice) and notice.severity == "info"
    assert "Indexing 20,000 files" in notice.message and "(10 done)" in notice.message
