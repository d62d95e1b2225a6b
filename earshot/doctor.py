"""`earshot doctor`: check the setup and say, in plain lines, what is wrong and how to fix it.

Each check prints one line (`ok`, `note` or `problem`) and, for anything not ok, a `fix:` line.
Checked, in order: Python and earshot; the settings files (valid or not, which keys they set:
never their values); credentials per provider (found, or the variable to set: never a secret);
the OpenAI-compatible servers whose models the picker offers (their lists are fetched now and
cached); the model new sessions get and why, with its context window; git and ripgrep; the
command sandbox a session here would get (`agent.sandbox.command_sandbox`, probed as a session
probes it); the MCP servers of the settings (each
started, its tools listed); and the editor entries that start earshot (`earshot.doctor_editors`).
The exit code is 1 when any problem was found.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, assert_never, cast

from earshot.doctor_editors import Finding, Status, editor_findings

if TYPE_CHECKING:
    from agent.settings import SandboxConfig
    from earshot.compose import Composition

MIN_PYTHON = (3, 11)
MCP_TIMEOUT_SECONDS = 10.0
SERVER_TIMEOUT_SECONDS = 5.0
_LABELS: Mapping[Status, str] = {"ok": "ok     ", "note": "note   ", "problem": "problem"}


class Report:
    """The lines written so far, and how many were problems."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.problems = 0

    def section(self, title: str) -> None:
        self.out.write(f"\n{title}\n")

    def add(self, finding: Finding) -> None:
        if finding.status == "problem":
            self.problems += 1
        self.out.write(f"  {_LABELS[finding.status]} {finding.text}\n")
        if finding.fix and finding.status != "ok":
            self.out.write(f"          fix: {finding.fix}\n")
        self.out.flush()


def run_doctor(cwd: Path, *, environ: Mapping[str, str] | None = None, out: TextIO) -> int:
    """Run every check for a session in `cwd`; 0 when nothing is a problem, else 1."""
    import anyio

    environ = dict(os.environ if environ is None else environ)
    report = Report(out)
    out.write(f"earshot doctor: the setup for {cwd}\n")
    report.section("Python and earshot")
    for finding in _versions(environ):
        report.add(finding)
    report.section("Settings")
    for finding in _settings(cwd, environ):
        report.add(finding)
    composition = _composition(cwd, environ, report)
    if composition is not None:
        report.section("Credentials")
        for finding in _credentials(composition):
            report.add(finding)
        # Before the model: a window its server reports is the model's window.
        report.section("Model servers")
        for finding in _model_servers(composition):
            report.add(finding)
        report.section("Model")
        for finding in _model(composition):
            report.add(finding)
    report.section("Tools")
    for finding in _tools(environ):
        report.add(finding)
    report.section("Sandbox")
    sandbox_config = composition.settings.sandbox if composition is not None else None
    for finding in anyio.run(_sandbox, cwd, sandbox_config):
        report.add(finding)
    if composition is not None:
        report.section("MCP servers")
        for finding in anyio.run(_mcp, composition):
            report.add(finding)
    report.section("Editors")
    for finding in editor_findings(environ):
        report.add(finding)
    count = report.problems
    out.write(f"\n{count} problem{'s' if count != 1 else ''}.\n" if count else "\nAll good.\n")
    return 1 if count else 0


# --------------------------------------------------------------------------------- checks


def _versions(environ: Mapping[str, str]) -> list[Finding]:
    from earshot import __version__

    version = platform.python_version()
    python = Finding("ok", f"Python {version} ({sys.executable})")
    if sys.version_info[:2] < MIN_PYTHON:
        python = Finding(
            "problem", f"Python {version} is older than 3.11", "install earshot with Python 3.11+"
        )
    found = shutil.which("earshot", path=environ.get("PATH"))
    command = (
        Finding("ok", f"earshot {__version__}, the command is {found}")
        if found
        else Finding(
            "note",
            f"earshot {__version__} runs, but no `earshot` command is on PATH",
            "install it with `pipx install .` or `uv tool install .` in a checkout, or give "
            "editors the path of the venv's earshot",
        )
    )
    return [python, command]


def _settings(cwd: Path, environ: Mapping[str, str]) -> list[Finding]:
    import json

    from agent.settings import SettingsError, read_settings_file, settings_paths

    findings: list[Finding] = []
    for scope, path in settings_paths(cwd, environ=environ).items():
        if not path.exists():
            findings.append(Finding("note", f"{scope} settings {path}: none"))
            continue
        try:
            read_settings_file(path, scope)
            raw: object = json.loads(path.read_text(encoding="utf-8") or "{}")
        except SettingsError as exc:
            findings.append(
                Finding("problem", str(exc), "correct the file: no session starts until it is")
            )
            continue
        keys = ", ".join(sorted(cast("dict[str, object]", raw))) if isinstance(raw, dict) else ""
        findings.append(Finding("ok", f"{scope} settings {path}: {keys or 'empty'}"))
    return findings


def _composition(cwd: Path, environ: Mapping[str, str], report: Report) -> Composition | None:
    from agent.settings import SettingsError
    from earshot.compose import Composition

    try:
        composition = Composition.load(cwd, environ=environ)
    except SettingsError:
        return None  # already reported, file by file
    if composition.settings.ignored:
        report.add(
            Finding(
                "note",
                composition.settings.ignored.notice(cwd),
                f"`earshot trust {cwd}` if you trust this repository",
            )
        )
    return composition


def _credentials(composition: Composition) -> list[Finding]:
    from earshot.compose import KEY_HINT_PROVIDERS
    from providers.registry import all_providers, provider_spec

    credentialed = composition.credentialed()
    findings: list[Finding] = []
    for provider in credentialed:
        findings.append(Finding("ok", f"{provider}: {_source(composition, provider)}"))
    for spec in all_providers():
        if spec.id in KEY_HINT_PROVIDERS and spec.id not in credentialed:
            findings.append(
                Finding(
                    "note",
                    f"{spec.id}: no key",
                    f"set {' or '.join(spec.env)} to use {spec.name}",
                )
            )
    for provider in composition.user_providers:
        if provider not in credentialed and provider_spec(provider) is None:
            problem = composition.check_credentials(f"{provider}/x") or "not usable"
            findings.append(Finding("problem", f"{provider} (settings): {problem}", problem))
    if not credentialed:
        findings.append(
            Finding("problem", "no provider has credentials", composition.no_credentials_message())
        )
    return findings


def _source(composition: Composition, provider: str) -> str:
    from providers.registry import provider_spec

    user = composition.user_providers.get(provider)
    if user is not None and user.api_key:
        return f"apiKey in providers.{provider} (settings)"
    if user is not None and user.api_key_env:
        return f"{user.api_key_env} is set (providers.{provider}.apiKeyEnv)"
    spec = provider_spec(provider)
    for variable in (*(spec.env if spec else ()), *(spec.token_env if spec else ())):
        if composition.environ.get(variable, "").strip():
            return f"{variable} is set"
    return "no key needed (a local server)" if user is not None else "configured"


def _model(composition: Composition) -> list[Finding]:
    from earshot.compose import NoCredentials
    from providers.registry import split_model_name

    try:
        pick = composition.pick_model()
    except NoCredentials as exc:
        return [Finding("problem", "no model can be chosen", str(exc))]
    why = {
        "settings": '"model" in settings',
        "EARSHOT_MODEL": "EARSHOT_MODEL is set",
        "--model": "--model",
    }.get(pick.reason, pick.reason)
    findings = [Finding("ok", f"new sessions use {pick.name} ({why})")]
    problem = composition.check_credentials(pick.name)
    if problem is not None:
        findings.append(Finding("problem", f"{pick.name} cannot be used: {problem}", problem))
    try:
        info = composition.catalog.get(*split_model_name(pick.name))
    except ValueError as exc:
        return [*findings, Finding("problem", str(exc), 'set "model" to provider/model')]
    if info is None:
        findings.append(
            Finding("problem", f"{pick.name}: unknown provider", "see `earshot models`")
        )
    elif info.window_assumed:
        findings.append(
            Finding(
                "note",
                f"its context window is unknown: {info.context_window:,} tokens are assumed",
                f'set "models": {{"{pick.name}": {{"contextWindow": N}}}} in settings',
            )
        )
    else:
        findings.append(Finding("ok", f"context window {info.context_window:,} tokens"))
    return findings


def _tools(environ: Mapping[str, str]) -> list[Finding]:
    findings: list[Finding] = []
    for name, program, purpose in (
        ("git", "git", "undo snapshots need it"),
        ("ripgrep", "rg", "the grep tool needs it"),
    ):
        path = shutil.which(program, path=environ.get("PATH"))
        if path is None:
            findings.append(
                Finding(
                    "problem",
                    f"{name} ({program}) is not on PATH: {purpose}",
                    f"install {name} (apt install {name}, brew install {name})",
                )
            )
            continue
        version = _first_line([path, "--version"])
        findings.append(Finding("ok", f"{version or name} ({path})"))
    return findings


async def _sandbox(cwd: Path, config: SandboxConfig | None) -> list[Finding]:
    """The sandbox a session here would get: the real one (`agent.sandbox.command_sandbox`), probed
    as a session probes it, with the settings that shape it."""
    from agent.sandbox import open_sandbox
    from agent.settings import SandboxConfig

    sandbox = await open_sandbox(config or SandboxConfig(), [cwd])
    match sandbox.status:
        case "active":
            assert sandbox.engine is not None
            network = "with the network" if sandbox.config.network else "without the network"
            findings = [
                Finding("ok", f"commands run in a {sandbox.engine.name} sandbox, {network}")
            ]
            findings += [
                Finding("note", f"also writable: {path}") for path in sandbox.config.writable_paths
            ]
            return findings
        case "off":
            return [
                Finding(
                    "note",
                    "the command sandbox is turned off in settings: commands run unconfined, "
                    "as modes and rules allow",
                    'remove "sandbox": {"enabled": false} to confine them',
                )
            ]
        case "unavailable":
            return [
                Finding(
                    "problem",
                    f"no command sandbox: {sandbox.reason}; every command will ask",
                    "install bubblewrap (apt install bubblewrap) and allow unprivileged user "
                    'namespaces, or set "sandbox": {"enabled": false} in your user settings',
                )
            ]
        case _:
            assert_never(sandbox.status)


async def _mcp(composition: Composition) -> list[Finding]:
    import anyio

    from earshot.mcp_connections import connect_servers
    from earshot.mcp_tools import tool_prefix

    servers = composition.mcp_servers()
    if not servers:
        return [Finding("note", "no MCP servers in the settings")]
    findings: list[Finding] = []
    with open(os.devnull, "w", encoding="utf-8") as quiet:
        async with anyio.create_task_group() as tasks:
            connections = await connect_servers(
                servers, spawn=tasks.start_soon, timeout=MCP_TIMEOUT_SECONDS, errlog=quiet
            )
            failed = {failure.server: failure.message for failure in connections.failures}
            for server in servers:
                if server.name in failed:
                    findings.append(
                        Finding(
                            "problem",
                            f"{server.name}: {failed[server.name]}",
                            f'check "mcpServers.{server.name}" in settings (run its command '
                            "by hand to see why it fails)",
                        )
                    )
                    continue
                prefix = tool_prefix(server.name)
                names = [
                    t.name[len(prefix) :] for t in connections.tools if t.name.startswith(prefix)
                ]
                findings.append(
                    Finding("ok", f"{server.name}: {len(names)} tools ({', '.join(names)})")
                )
            await connections.aclose()
            tasks.cancel_scope.cancel()
    return findings


def _model_servers(composition: Composition) -> list[Finding]:
    from earshot.model_lists import picker_targets
    from providers.catalog import default_data_dir
    from providers.discovery import ServerModelCache, fetch_listing
    from providers.wire.server_models import ServerModelsError

    targets = picker_targets(composition)
    if not targets:
        return [Finding("note", "no local or self-hosted OpenAI-compatible server configured")]
    cache = ServerModelCache(default_data_dir(composition.environ))
    findings: list[Finding] = []
    for target in targets:
        url = target.endpoint.base_url or ""
        try:
            listing = fetch_listing(target.endpoint, timeout=SERVER_TIMEOUT_SECONDS)
        except ServerModelsError as exc:
            findings.append(
                Finding(
                    "problem",
                    f"{target.provider} ({url}): {exc}",
                    f"start the server, or correct providers.{target.provider}.baseUrl",
                )
            )
            continue
        with contextlib.suppress(OSError):  # only the picker's cache: the check succeeded
            cache.write(listing)
        composition.catalog.learn_windows(listing.windows())
        shown = ", ".join(model.id for model in listing.models[:8])
        more = f" and {len(listing.models) - 8} more" if len(listing.models) > 8 else ""
        findings.append(
            Finding(
                "ok", f"{target.provider} ({url}): {len(listing.models)} models ({shown}{more})"
            )
        )
    return findings


# -------------------------------------------------------------------------------- helpers


def _first_line(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0] if lines else ""
