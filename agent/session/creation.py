"""`create_session`: a new session, or one resumed from its transcript, assembled from the
composition root's options and the settings."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from agent.backends import DenyingInteraction, FileBackend, Interaction, ProcessBackend
from agent.history.session_transcript import SessionTranscript
from agent.session.agent_session import AgentSession
from agent.session.setup import (
    SessionOptions,
    build_model,
    remembered_prompt,
    resumed_settings,
    set_up,
)
from agent.tasks import SessionTasks
from sessions import SessionStore

if TYPE_CHECKING:
    from agent.settings.scopes import Settings
    from providers.catalog import ModelCatalog
    from providers.model import Model


async def create_session(
    *,
    store: SessionStore,
    cwd: Path,
    options: SessionOptions,
    model_factory: Callable[[str], Model],
    catalog: ModelCatalog | None = None,
    settings: Settings | None = None,
    files: FileBackend | None = None,
    processes: ProcessBackend | None = None,
    interaction: Interaction | None = None,
    additional_directories: Sequence[Path] = (),
    resume_id: str | None = None,
    promised_id: str | None = None,
    data_dir: Path | None = None,
    tasks: SessionTasks | None = None,
) -> AgentSession:
    """Start a new session, or resume `resume_id` (its history, model, mode, title and todo list
    come back; permission grants do not). `promised_id` is the id a new session gets when a
    front end already announced one (minted with `sessions.ids.new_id`).

    `tasks` is the session's block (`async with SessionTasks() as tasks:`): what outlives its
    turns (language servers, the code index's refreshes) runs there, and the session is closed
    at its end. None: a session outside any block (a test, a one-shot embedder), in which a
    language server or an index refresh fails, saying why.

    Raises:
        ModelUnavailable: the model cannot be built.
        sessions.SessionNotFound: `resume_id` names no session.
    """
    cwd = cwd.resolve()
    extra_roots = [path.resolve() for path in additional_directories]
    if resume_id is None:
        model = build_model(model_factory, options.model_name)
        stored = await store.create(
            cwd, additional_directories=[str(p) for p in extra_roots], session_id=promised_id
        )
        model_name, effort, mode = options.model_name, options.reasoning_effort, options.mode
        try:
            await SessionTranscript(stored).record_settings(
                model=model_name, effort=effort, mode=mode
            )
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stored.aclose()  # its writer lock with it
            raise
    else:
        stored = await store.open(resume_id)
        try:
            model_name, effort, mode, model = await resumed_settings(
                stored, options, partial(build_model, model_factory)
            )
        except BaseException:
            await stored.aclose()
            raise
        for directory in stored.header.additional_directories:
            if Path(directory) not in extra_roots:
                extra_roots.append(Path(directory))
    roots = (cwd, *(root for root in extra_roots if root != cwd))
    try:
        # The client's system prompt, or the one kept with the session (a load that sends none).
        client_prompt = await remembered_prompt(stored, options.client_prompt)
        options = dataclasses.replace(options, client_prompt=client_prompt)
        setup = await set_up(
            cwd=cwd,
            roots=roots,
            settings=settings,
            files=files,
            processes=processes,
            data=data_dir,
            tasks=SessionTasks() if tasks is None else tasks,
        )
    except BaseException:
        # Failed or cancelled (the front end stopped): the session file's writer lock must not
        # outlive the attempt (a front end in a longer-lived process opens the session again).
        with anyio.CancelScope(shield=True):
            await stored.aclose()
        raise
    session = AgentSession(
        transcript=SessionTranscript(stored),
        options=options,
        model=model,
        model_name=model_name,
        reasoning_effort=effort,
        mode=mode,
        model_factory=model_factory,
        catalog=catalog,
        interaction=interaction or DenyingInteraction(),
        roots=roots,
        setup=setup,
        store=store,
    )
    if tasks is not None:
        tasks.on_close(session.aclose)
    return session


__all__ = ["create_session"]
