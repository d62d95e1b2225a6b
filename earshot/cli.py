"""The `earshot` command line.

`earshot --stdio` (or `earshot acp`) serves ACP and is dispatched before anything else is
imported: an editor waits on it. Only those exact arguments take that path: `earshot --stdio
--help` prints the help and `earshot --stdio --bogus` is refused, by argparse, instead of
starting a server that would wait on a terminal. Everything else goes through argparse.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from pathlib import Path

DESCRIPTION = """earshot: a coding agent that editors run over the Agent Client Protocol.

  earshot --stdio                      serve ACP on stdin/stdout (what an editor starts)
  earshot -p "fix the failing test"    one turn, headless, in this directory
  earshot sessions list [--all]        sessions of this directory (or all)
  earshot sessions show ID [--branch B] a session's transcript (B: a branch of `tree`)
  earshot sessions tree ID             its branches, subagent sessions and forks
  earshot sessions replay ID [--html F] the session as it happened (terminal, or a shareable page)
  earshot audit [--since 7d] [--all]   what agents did here: commands, writes, fetches, decisions
  earshot blame FILE [--json]          which session, turn and tool call wrote each line
  earshot eval TASKS --model M         run an evaluation task set (pass rate, turns, tokens, cost)
  earshot models [--provider P]        providers with credentials, and their models
  earshot models --refresh             first download the models.dev catalog (network)
  earshot undo                         undo the last change batch of this directory's session
  earshot doctor                       check the setup: settings, keys, model, tools, editors
  earshot login                        set a provider's API key (asked in the terminal)
  earshot serve [--port N]             serve ACP over WebSocket (loopback, bearer token)
  earshot trust [DIR] | --list         let DIR's settings (default: here) grant and run commands
  earshot untrust [DIR]                stop trusting DIR
"""

EPILOG = """print mode exit codes: 0 done, 1 model error, 2 usage/config error,
3 a tool call was refused by the permission gate, 130 cancelled.
Keys come from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY,
OPENROUTER_API_KEY, ...) or settings: ~/.config/earshot/settings.json."""

MODES = ("plan", "ask", "accept-edits", "auto", "yolo")


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="earshot",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", "-V", action="store_true", help="print the version")
    parser.add_argument(
        "--stdio", action="store_true", help="serve ACP on stdin/stdout (for editors)"
    )
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        help="run one turn headless and print the answer ('-' reads the prompt from stdin)",
    )
    parser.add_argument(
        "--output-format",
        choices=("text", "json"),
        default="text",
        help="text: the answer on stdout, progress on stderr; json: one event per line",
    )
    parser.add_argument(
        "--permission-mode",
        choices=MODES,
        help="permission mode for this run (default: settings `mode`, else ask, which "
        "refuses anything that would prompt)",
    )
    parser.add_argument(
        "--model", metavar="PROVIDER/MODEL", help="e.g. anthropic/claude-sonnet-4-5"
    )
    parser.add_argument("--resume", metavar="ID", help="continue the session with this id")
    parser.add_argument(
        "--fork", metavar="ID", help="continue from a copy of this session (it stays as it is)"
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="continue the newest session of this directory",
    )
    parser.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="PATH",
        help="attach an image (repeatable); @path in the prompt works too",
    )
    parser.add_argument(
        "--cwd", metavar="DIR", help="work in this directory (default: the current one)"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("acp", help="serve ACP on stdin/stdout (same as --stdio)")
    sessions = commands.add_parser("sessions", help="list or show sessions")
    session_commands = sessions.add_subparsers(dest="sessions_command", required=True)
    listing = session_commands.add_parser("list", help="sessions, newest first")
    listing.add_argument("--all", action="store_true", help="every directory, not just this one")
    show = session_commands.add_parser("show", help="a session's transcript")
    show.add_argument("id")
    show.add_argument(
        "--branch",
        metavar="B",
        help="show this branch (number from `sessions tree`, `current`, or an entry id)",
    )
    tree = session_commands.add_parser("tree", help="a session's branches, children and forks")
    tree.add_argument("id")
    replay = session_commands.add_parser(
        "replay", help="the session as it happened: every branch, call, diff and decision"
    )
    replay.add_argument("id")
    replay.add_argument(
        "--html", metavar="OUT", help="write a self-contained HTML page to OUT instead"
    )
    audit = commands.add_parser(
        "audit",
        help="what agents did in this directory: commands (exit code, sandboxed or not), file "
        "writes, fetches, MCP calls and every permission decision",
    )
    audit.add_argument(
        "--since", metavar="DATE", help="only since DATE (2025-06-01, 2025-06-01T14:00, 7d, 12h)"
    )
    audit.add_argument("--all", action="store_true", help="every directory, not just this one")
    audit.add_argument("--json", action="store_true", help="one JSON document")
    blame = commands.add_parser(
        "blame", help="for each line of FILE, the session, turn and tool call that last wrote it"
    )
    blame.add_argument("file", metavar="FILE")
    blame.add_argument("--json", action="store_true", help="JSON for editors")
    from earshot.eval_cli import add_eval_parser

    add_eval_parser(commands)
    models = commands.add_parser("models", help="providers and models from the catalog")
    models.add_argument("--provider", metavar="ID", help="list this provider's models")
    models.add_argument(
        "--refresh",
        action="store_true",
        help="download the models.dev catalog into the data dir first (the only network use)",
    )
    commands.add_parser("undo", help="undo the last change batch of this directory's session")
    commands.add_parser(
        "login",
        help="set a provider's API key: asked without echo, saved in your user settings (mode "
        "600); editors that sign in through a terminal run it for you",
    )
    commands.add_parser(
        "doctor",
        help="check the setup (Python, settings, keys, model, git, ripgrep, sandbox, MCP "
        "servers, editor entries) and say how to fix what is wrong",
    )
    serve = commands.add_parser(
        "serve",
        help="serve ACP over WebSocket for remote clients: loopback by default, a bearer token "
        "required (generated and printed, or from --token-file)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="port (8765; 0 picks a free one)")
    serve.add_argument(
        "--token-file", metavar="PATH", help="read the token from PATH (mode 600) instead"
    )
    trust = commands.add_parser(
        "trust",
        help="trust a directory: its .earshot settings may add allow rules, hooks, MCP servers",
    )
    trust.add_argument("directory", nargs="?", metavar="DIR", help="default: the current one")
    trust.add_argument("--list", action="store_true", help="list the trusted directories")
    untrust = commands.add_parser("untrust", help="stop trusting a directory")
    untrust.add_argument("directory", nargs="?", metavar="DIR", help="default: the current one")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["login"], ["--stdio", "login"], ["acp", "login"]):
        # ACP terminal sign-in runs the editor's own command with `login` appended.
        return _login()
    if args == ["--stdio"] or args == ["acp"]:
        from earshot.acp_main import run_stdio

        return run_stdio()
    if args and args[0] in ("--version", "-V"):
        from earshot import __version__

        print(f"earshot {__version__}")
        return 0
    parser = _parser()
    try:
        options = parser.parse_args(args)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    from earshot.text_safety import install

    # Every command but the ACP server (dispatched above) writes through `terminal_safe`: what it
    # shows came from a model, a tool, a transcript or a repository (earshot.text_safety).
    install(json_stdout=_json_stdout(options))
    try:
        return _dispatch(parser, options)
    except (BrokenPipeError, BaseExceptionGroup) as exc:
        if not _only_broken_pipes(exc):
            raise
        return _reader_went_away()


SIGPIPE_STATUS = 128 + 13
"""What a shell reports for a tool its reader left (`earshot models | head -1`): killed by
SIGPIPE. earshot is not killed (a print-mode turn still saves its session), but exits with it."""


def _only_broken_pipes(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", exc)
        return all(_only_broken_pipes(inner) for inner in group.exceptions)
    return isinstance(exc, BrokenPipeError)


def _reader_went_away() -> int:
    """stdout's reader closed it: exit quietly, as any Unix tool does. What is still buffered
    would fail again when Python flushes stdout at exit (printing "Exception ignored"), so
    stdout is pointed at /dev/null first (the recipe of Python's `signal` documentation)."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    return SIGPIPE_STATUS


def _json_stdout(options: argparse.Namespace) -> bool:
    """Whether the command writes JSON on stdout (`-p --output-format json`, `--json`)."""
    printing_json = options.prompt is not None and options.output_format == "json"
    return printing_json or bool(getattr(options, "json", False))


def _dispatch(parser: argparse.ArgumentParser, options: argparse.Namespace) -> int:
    if options.version:
        from earshot import __version__

        print(f"earshot {__version__}")
        return 0
    if options.stdio or options.command == "acp":
        # Anything beside --stdio parsed, but the server takes no options: say so rather than
        # start it with the option ignored.
        parser.print_usage(sys.stderr)
        print(
            "earshot: --stdio (and acp) take no other arguments: an editor starts "
            "`earshot --stdio` and speaks ACP on its stdin",
            file=sys.stderr,
        )
        return 2
    _log_to_stderr()
    from pathlib import Path

    cwd = Path(options.cwd).expanduser().resolve() if options.cwd else Path.cwd()
    if options.command is not None and options.prompt is not None:
        parser.print_usage(sys.stderr)
        print(f"earshot: -p cannot be combined with `{options.command}`", file=sys.stderr)
        return 2
    match options.command:
        case "sessions":
            return _sessions(options, cwd)
        case "models":
            if options.refresh and (failed := _refresh_catalog()):
                return failed
            return _models(cwd, cast("str | None", options.provider))
        case "login":
            return _login()
        case "undo":
            import anyio

            from earshot.commands import undo

            return anyio.run(lambda: undo(cwd, out=sys.stdout))
        case "trust" | "untrust":
            return _trust(options, cwd)
        case "doctor":
            from earshot.doctor import run_doctor

            return run_doctor(cwd, out=sys.stdout)
        case "audit" | "blame" | "eval":
            return _inspect(options, cwd)
        case "serve":
            from earshot.serve_cli import run_serve

            return run_serve(
                host=cast("str", options.host),
                port=cast("int", options.port),
                token_file=cast("str | None", options.token_file),
            )
        case _:
            pass
    if options.prompt is None:
        parser.print_help(sys.stderr)
        return 2
    return _print_mode(options, cwd)


def _login() -> int:
    import getpass
    import os

    from earshot.login import run_login

    return run_login(
        environ=os.environ, stdin=sys.stdin, out=sys.stdout, read_secret=getpass.getpass
    )


def _log_to_stderr() -> None:
    """The agent's and the session store's log lines go to stderr (or `EARSHOT_LOG_FILE`) as
    JSON, tracebacks as plain text: structlog's default would print to stdout, which belongs to
    the answer (print mode's NDJSON above all), with rich tracebacks dumping local variables.
    structlog itself is imported only if something logs."""
    from providers.logs import configure

    configure()


def _sessions(options: argparse.Namespace, cwd: Path) -> int:
    from earshot.commands import sessions_list, sessions_show

    if options.sessions_command == "list":
        return sessions_list(cwd, all_directories=bool(options.all), out=sys.stdout)
    import anyio

    from earshot.session_tree import sessions_show_branch, sessions_tree

    session_id = cast("str", options.id)
    if options.sessions_command == "tree":
        return anyio.run(lambda: sessions_tree(session_id, out=sys.stdout, err=sys.stderr))
    branch = cast("str | None", getattr(options, "branch", None))
    if branch is not None:
        return anyio.run(
            lambda: sessions_show_branch(session_id, branch, out=sys.stdout, err=sys.stderr)
        )
    if options.sessions_command == "replay":
        from earshot.replay_cli import run_replay

        html_out = cast("str | None", options.html)
        return anyio.run(
            lambda: run_replay(session_id, html_out=html_out, out=sys.stdout, err=sys.stderr)
        )
    return anyio.run(lambda: sessions_show(session_id, out=sys.stdout, err=sys.stderr))


def _inspect(options: argparse.Namespace, cwd: Path) -> int:
    """`earshot audit`, `earshot blame` and `earshot eval`: read transcripts, or run tasks."""
    import anyio

    if options.command == "audit":
        from earshot.audit import run_audit

        return anyio.run(
            lambda: run_audit(
                cwd,
                since=cast("str | None", options.since),
                all_directories=bool(options.all),
                as_json=bool(options.json),
                out=sys.stdout,
                err=sys.stderr,
            )
        )
    if options.command == "blame":
        from earshot.blame import run_blame

        file = cast("str", options.file)
        return anyio.run(
            lambda: run_blame(
                file, cwd=cwd, as_json=bool(options.json), out=sys.stdout, err=sys.stderr
            )
        )
    from earshot.eval_cli import run_eval_command

    return run_eval_command(options, cwd)


CATALOG_URL_VARIABLE = "EARSHOT_CATALOG_URL"
"""Where `earshot models --refresh` downloads from instead of models.dev (mirrors, tests); read
by that command only."""


def _refresh_catalog() -> int:
    """`earshot models --refresh`: fetch the models.dev catalog into the data dir's cache (the
    live layer every later start reads) and say how many models it holds. 0 on success."""
    import json
    import os

    from providers.catalog import MODELS_DEV_URL, default_data_dir, fetch_catalog
    from providers.errors import ProviderException

    url = os.environ.get(CATALOG_URL_VARIABLE) or MODELS_DEV_URL
    try:
        path = fetch_catalog(default_data_dir(), url=url)
    except ProviderException as exc:
        print(f"earshot: catalog refresh failed: {exc.error.message}", file=sys.stderr)
        return 1
    providers = json.loads(path.read_text(encoding="utf-8"))["providers"]
    count = sum(len(models) for models in providers.values())
    print(f"catalog refreshed from {url}: {count} models of {len(providers)} providers in {path}")
    return 0


def _models(cwd: Path, provider: str | None) -> int:
    from agent.settings import SettingsError
    from earshot.commands import models
    from earshot.compose import Composition

    try:
        composition = Composition.load(cwd)
    except SettingsError as exc:
        print(f"earshot: {exc}", file=sys.stderr)
        return 2
    return models(composition, provider=provider, out=sys.stdout, err=sys.stderr)


def _trust(options: argparse.Namespace, cwd: Path) -> int:
    """`earshot trust [DIR]`, `earshot trust --list`, `earshot untrust [DIR]` (see
    agent.settings.trust)."""
    from pathlib import Path

    from agent.settings import (
        SettingsError,
        is_trusted,
        resolve_directory,
        set_directory_trust,
        trusted_directories,
    )

    try:
        if options.command == "trust" and options.list:
            if options.directory is not None:
                print("earshot: trust --list takes no directory", file=sys.stderr)
                return 2
            entries = trusted_directories()
            if not entries:
                print("no directory is trusted (trust one with `earshot trust [DIR]`)")
            for entry in entries:
                print(entry)
            return 0
        given = cast("str | None", options.directory)
        directory = resolve_directory(cwd / Path(given).expanduser() if given else cwd)
        if not directory.is_dir():
            print(f"earshot: not a directory: {directory}", file=sys.stderr)
            return 2
        trusted = options.command == "trust"
        path, changed = set_directory_trust(directory, trusted)
        remaining = trusted_directories()
    except SettingsError as exc:
        print(f"earshot: {exc}", file=sys.stderr)
        return 2
    if trusted:
        state = "trusted" if changed else "already trusted"
        print(f"{state}: {directory} (recorded in {path}); new sessions there apply its settings")
        return 0
    print(f"{'no longer trusted' if changed else 'was not trusted'}: {directory}")
    if is_trusted(directory, remaining):
        print("it is still trusted through a parent directory; see `earshot trust --list`")
    return 0


def _print_mode(options: argparse.Namespace, cwd: Path) -> int:
    from pathlib import Path

    from acp_server.interrupt import exit_on_interrupt
    from earshot.print_mode import PrintOptions, run_print

    # Outside a turn (loading, reading the prompt, saving), Ctrl-C ends the run at once rather
    # than raising KeyboardInterrupt wherever it lands (acp_server.interrupt says why).
    exit_on_interrupt(b"earshot: cancelled\n")
    prompt = cast("str", options.prompt)
    if prompt == "-":
        prompt = sys.stdin.read()
    problem = "the prompt is empty" if not prompt.strip() else None
    if options.fork is not None and (options.resume is not None or options.continue_latest):
        problem = "--fork cannot be used with --resume or --continue"
    if problem is not None:
        from earshot.print_mode import Renderer, usage_failure

        renderer = Renderer(options.output_format, sys.stdout, sys.stderr)
        return usage_failure(renderer, problem)
    return run_print(
        PrintOptions(
            prompt=prompt,
            cwd=cwd,
            output_format=options.output_format,
            permission_mode=options.permission_mode,
            model=options.model,
            resume=options.resume,
            fork=options.fork,
            continue_latest=bool(options.continue_latest),
            images=tuple(Path(path) for path in cast("list[str]", options.image)),
        )
    )
