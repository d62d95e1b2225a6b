"""A session keeps its prompt cacheable on every wire: the real agent and the real vendor SDKs
against a loopback fake keeping that vendor's prompt cache (`bench/cost_fakes.py`, the
benchmark's own), across tool turns, a batch of a dozen parallel calls, a compaction, a model
switch and a resumed session.

What is asserted is what was sent: each request's prompt starts with the previous one byte for
byte (markers aside) unless a compaction rewrote it; each reads all of the previous one from the
cache (the fake says so by the vendor's rules); Anthropic requests carry at most 4 breakpoints
and the fake refuses none; OpenAI requests carry the session's `prompt_cache_key`, the same
after a resume."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import anyio
import pytest

from agent.context import CacheSetting
from agent.context.compaction import SUMMARY_REQUEST_OPENING, SUMMARY_SYSTEM_PROMPT
from agent.session import AgentSession, SessionOptions, create_session
from agent.settings import Settings
from bench.cost_fakes import (
    CHARS_PER_TOKEN,
    PREFIX_MINIMUM_TOKENS,
    PREFIX_STEP_TOKENS,
    WIRES,
    Call,
    Exchange,
    FakeProvider,
    Reply,
    Wire,
    serving,
)
from providers.catalog import ModelCatalog
from providers.model import Endpoint, Model, WireApi
from providers.wire import anthropic_messages, gemini, openai_chat, openai_responses
from sessions import SessionStore

MODELS: dict[Wire, tuple[str, str, str]] = {
    # provider, the first model, the model switched to
    "anthropic": ("anthropic", "claude-sonnet-4-5", "claude-haiku-4-5"),
    "openai-chat": ("openai", "gpt-5.1", "gpt-5.5"),
    "openai-responses": ("openai", "gpt-5.1", "gpt-5.5"),
    "gemini": ("google", "gemini-2.5-pro", "gemini-2.5-flash"),
}
CREATE = {
    "anthropic": anthropic_messages.create_model,
    "openai-chat": openai_chat.create_model,
    "openai-responses": openai_responses.create_model,
    "gemini": gemini.create_model,
}
FILES = 14


class Brain:
    """Turn 0: two reads, then an answer; turn 1: twelve reads at once; later turns: one read."""

    def __init__(self) -> None:
        self.turn = 0
        self.step = 0

    def start(self, turn: int) -> None:
        self.turn, self.step = turn, 0

    def __call__(self, summary: bool) -> Reply:
        if summary:
            return Reply("The summary: files were read and explained. " * 20)
        step, self.step = self.step, self.step + 1
        match self.turn, step:
            case 0, 0:
                return Reply("Reading two.", [_read(0), _read(1)])
            case 1, 0:
                return Reply("Reading them all.", [_read(n) for n in range(2, 14)])
            case _, 0:
                return Reply("", [_read(self.turn % FILES)])
            case _:
                return Reply(f"Turn {self.turn}: they parse and render tokens. " * 12)


def _read(n: int) -> Call:
    return Call("read", {"path": f"src/module_{n}.py"})


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "project"
    for n in range(FILES):
        path = root / "src" / f"module_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            f"def render_token_{n}_{i}(value: int) -> str:\n    return str(value * {i})\n"
            for i in range(90)
        ]
        path.write_text("".join(lines), encoding="utf-8")
    yield root


async def _session(
    store: SessionStore,
    project: Path,
    fake: FakeProvider,
    wire: Wire,
    *,
    resume: str | None = None,
    cache: CacheSetting = "5m",
) -> AgentSession:
    provider = MODELS[wire][0]
    api: WireApi = wire

    def factory(name: str) -> Model:
        endpoint = Endpoint(provider_id=provider, api=api, base_url=fake.url, api_key="test-key")
        return CREATE[wire](name.split("/", 1)[1], endpoint)

    return await create_session(
        store=store,
        cwd=project,
        options=SessionOptions(model_name=f"{provider}/{MODELS[wire][1]}"),
        model_factory=factory,
        catalog=ModelCatalog.load(),
        settings=Settings(cache=cache),
        resume_id=resume,
        data_dir=project.parent / "data",
    )


async def _turn(session: AgentSession, brain: Brain, turn: int) -> None:
    brain.start(turn)
    async for _ in session.run_turn(f"Turn {turn}: what do these do?"):
        pass


def _canonical(exchange: Exchange) -> list[str]:
    return [segment.canonical for segment in exchange.segments]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_session_keeps_its_prompt_cacheable(
    wire: Wire, project: Path, tmp_path: Path
) -> None:
    brain = Brain()
    provider, _, switched = MODELS[wire]
    fake = FakeProvider(
        wire,
        brain,
        model=MODELS[wire][1],
        summary_markers=(SUMMARY_REQUEST_OPENING, SUMMARY_SYSTEM_PROMPT[:60]),
    )
    store = SessionStore(tmp_path / "sessions")
    rewritten: set[int] = set()
    """Requests whose prompt a compaction rewrote (the first after it)."""
    with serving(fake), anyio.fail_after(60):
        session = await _session(store, project, fake, wire)
        for turn in range(3):
            await _turn(session, brain, turn)
        async for _ in session.compact():
            pass
        rewritten.add(len(fake.exchanges))
        await _turn(session, brain, 3)
        await session.set_model(f"{provider}/{switched}")
        await _turn(session, brain, 4)
        session_id = session.id
        await session.aclose()
        resumed = await _session(store, project, fake, wire, resume=session_id)
        await _turn(resumed, brain, 5)
        await resumed.aclose()

    assert fake.errors == []
    exchanges = fake.exchanges
    summaries = [n for n, e in enumerate(exchanges) if e.summary]
    assert len(summaries) == 1 and summaries[0] + 1 in rewritten
    assert len(exchanges) >= 12
    for n in range(1, len(exchanges)):
        if n in rewritten:
            continue
        before, now = _canonical(exchanges[n - 1]), _canonical(exchanges[n])
        # Byte for byte the previous prompt, then what was appended since (the summary request
        # included: it is the conversation with a request for the summary at its end).
        assert now[: len(before)] == before, (wire, n)
        previous = exchanges[n - 1].use.input_tokens
        if wire == "anthropic":
            best = previous
        else:  # the whole 128-token steps of the previous prompt
            steps = sum(len(text) for text in before) // (PREFIX_STEP_TOKENS * CHARS_PER_TOKEN)
            best = steps * PREFIX_STEP_TOKENS
            best = best if best >= PREFIX_MINIMUM_TOKENS else 0
        assert exchanges[n].use.read >= best, (wire, n, exchanges[n].use, previous)
    # The compaction's new prompt is cached from the request after it on.
    first_after = min(rewritten)
    assert exchanges[first_after + 1].use.read >= exchanges[first_after].use.input_tokens * 0.9

    bodies = fake.bodies
    if wire == "anthropic":
        for body in bodies:
            assert _count_markers(body) <= 4
        assert all(_count_markers(body) >= 3 for body in bodies[1:])
    elif wire.startswith("openai"):
        assert {body.get("prompt_cache_key") for body in bodies} == {session_id}
    else:
        assert all("prompt_cache_key" not in body for body in bodies)


def _count_markers(value: object) -> int:
    if isinstance(value, dict):
        items = cast("dict[str, object]", value).items()
        return sum(1 if key == "cache_control" else _count_markers(item) for key, item in items)
    if isinstance(value, list):
        return sum(_count_markers(item) for item in cast("list[object]", value))
    return 0


async def test_caching_off_sends_no_breakpoints_and_no_key(project: Path, tmp_path: Path) -> None:
    brain = Brain()
    for wire in ("anthropic", "openai-responses"):
        fake = FakeProvider(wire, brain, model=MODELS[wire][1])
        with serving(fake), anyio.fail_after(30):
            session = await _session(
                SessionStore(tmp_path / wire), project, fake, wire, cache="off"
            )
            await _turn(session, brain, 0)
            await session.aclose()
        for body in fake.bodies:
            assert _count_markers(body) == 0 and "prompt_cache_key" not in body
            assert "prompt_cache_retention" not in body
        assert json.dumps(fake.bodies)  # every request reached the fake
