"""The settings that check and map code: `verify`, `lsp` and `repoMap`, merged across scopes.

`verify` commands and `lsp` servers RUN programs, so a repository's own settings files (project
and local scope) supply them only when the user trusts the workspace (`agent.settings.trust`);
otherwise they are left out and listed in the session's notice, like hooks. Verify rules are
concatenated across scopes (user first), like hooks; `lsp` entries merge by name, the later scope
replacing a whole entry. `repoMap` runs nothing (the map is built from files the model could read
anyway) and is taken from the most local scope that sets it.

Kept out of `agent.settings.scopes` so that module stays about loading and trust; it calls
`merge_code` once per file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from agent.settings.schema import LspServerSettings, SettingsFile

DEFAULT_VERIFY_TIMEOUT: Final = 60.0


@dataclass(frozen=True, slots=True)
class VerifyRule:
    """One `verify` entry (run by `agent.code.verify`)."""

    files: str
    """A gitignore-style glob, relative to the workspace root."""
    command: str
    """A shell command; `{files}` is replaced by the matching files, shell-quoted."""
    timeout: float = DEFAULT_VERIFY_TIMEOUT


@dataclass(frozen=True, slots=True)
class CodeConfig:
    """`verify`, `lsp` and `repoMap` as they apply to the session."""

    verify: tuple[VerifyRule, ...] = ()
    lsp: Mapping[str, LspServerSettings] = field(default_factory=lambda: {})
    repo_map: bool = False


def merge_code(
    current: CodeConfig, parsed: SettingsFile, *, grants: bool
) -> tuple[CodeConfig, tuple[str, ...], tuple[str, ...]]:
    """`current` with one file's `verify`, `lsp` and `repoMap` merged in. Without `grants` (an
    untrusted repository's file) the commands and servers are not: they come back as the
    second (`verify` commands) and third (`lsp.<name>: command`) items, for the notice."""
    repo_map = current.repo_map if parsed.repo_map is None else parsed.repo_map
    if not grants:
        ignored_verify = tuple(entry.command for entry in parsed.verify)
        ignored_lsp = tuple(f"lsp.{name}: {entry.command}" for name, entry in parsed.lsp.items())
        return CodeConfig(current.verify, current.lsp, repo_map), ignored_verify, ignored_lsp
    if not parsed.verify and not parsed.lsp:
        return CodeConfig(current.verify, current.lsp, repo_map), (), ()
    rules = tuple(
        VerifyRule(
            files=entry.files,
            command=entry.command,
            timeout=entry.timeout if entry.timeout is not None else DEFAULT_VERIFY_TIMEOUT,
        )
        for entry in parsed.verify
    )
    servers = {**current.lsp, **parsed.lsp}
    return CodeConfig(current.verify + rules, servers, repo_map), (), ()
