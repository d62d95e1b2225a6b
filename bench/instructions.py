"""What a turn and the `initialize` reply cost in instructions (valgrind's callgrind counts them),
the one measure a loaded machine does not move; writes the `## instructions` section of
bench/RESULTS.md.

    .venv/bin/python bench/instructions.py [--turns 4] [--no-write]
                                           [--dev-venv | --earshot PATH] [--tree DIR ...]

Needs `valgrind` (skipped, saying so, without it). Per build (`builds.py`):
- `initialize`: `earshot --stdio` reading one `initialize` line and then the end of its input,
  up to its reply (callgrind dumps its count before the process's first `os.write`, which is the
  reply) and whole (start, reply, exit: the event loop loads after the reply), beside `python -c
  pass` and `python -c "import asyncio"` of the same venv (what a reply from an asyncio loop
  could not beat);
- a turn: one session against `loopback.LoopbackChat` (the first chunk at once, 40 text chunks;
  every other turn reads a 6 KB file first, so it makes two model calls), opened, prompted once
  and left to settle (warm-up, background work) for 15 s; the same again with `--turns` more
  prompts; the difference over `--turns` is one turn, in the agent process alone (threads
  included; the model runs in this process).
Under valgrind the agent runs ~50x slower; the counts do not depend on it.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from builds import Build, add_arguments, builds
from loopback import AcpClient, LoopbackChat, bench_env, settings_for
from results_md import write_section

SECTION = "## instructions"
SETTLE_SECONDS = 15.0
_COLLECTED = re.compile(r"Collected : (\d+)")
_SUMMARY = re.compile(r"^summary: (\d+)", re.MULTILINE)


def callgrind(log: Path) -> list[str]:
    """The prefix that runs a command under callgrind, its count reported to `log`."""
    return ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", f"--log-file={log}"]


def collected(log: Path) -> int:
    found = _COLLECTED.search(log.read_text(encoding="utf-8"))
    if found is None:
        raise RuntimeError(f"valgrind reported no count: {log}")
    return int(found.group(1))


def to_reply(command: list[str], work: Path, *, stdin: bytes, env: dict[str, str]) -> int | None:
    """The instructions `command` runs before its first `os.write` (CPython's `os_write`: for
    `earshot --stdio`, the reply), or None when callgrind did not find the function."""
    profile = work / "callgrind-reply.out"
    log = work / "callgrind-reply.log"
    subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={profile}",
            "--dump-before=os_write",
            f"--log-file={log}",
            *command,
        ],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=work,
        check=False,
    )
    first = profile.with_name(profile.name + ".1")  # the first dump: up to the first write
    found = _SUMMARY.search(first.read_text(encoding="utf-8")) if first.exists() else None
    for dump in work.glob("callgrind-reply.out*"):
        dump.unlink()
    return int(found.group(1)) if found else None


def count(command: list[str], work: Path, *, stdin: bytes = b"", env: dict[str, str]) -> int:
    log = work / "callgrind.log"
    subprocess.run(
        [*callgrind(log), *command],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=work,
        check=False,
    )
    return collected(log)


def session_run(build: Build, work: Path, model: LoopbackChat, turns: int, tag: str) -> int:
    """Instructions of an agent process that opens a session, answers one prompt, settles,
    answers `turns` more, and ends."""
    workspace = work / "workspace"
    env = bench_env(work, settings_for(model))
    log = work / f"callgrind-{tag}.log"
    python = build.earshot.parent / "python"
    command = [*callgrind(log), str(python), str(build.earshot), "--stdio"]
    client = AcpClient(command, workspace, env)
    try:
        client.initialize()
        session_id, _ = client.new_session(workspace)
        client.prompt(session_id, f"[bench {tag}w] say ok")
        time.sleep(SETTLE_SECONDS)
        for turn in range(turns):
            text = "read notes.txt and tell me" if turn % 2 else "say something short"
            client.prompt(session_id, f"[bench {tag}t{turn}] {text}")
    finally:
        client.close()
    return collected(log)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--no-write", action="store_true")
    add_arguments(parser)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing measured (apt-get install valgrind)")
        return 0
    model = LoopbackChat(chunks=40)
    rows: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="earshot-bench-instructions-") as temp:
            work = Path(temp)
            found = builds(args, work)
            workspace = work / "workspace"
            workspace.mkdir()
            line = "The quick brown fox jumps over the lazy dog; earshot reads this line.\n"
            (workspace / "notes.txt").write_text(line * (6 * 1024 // len(line)), "utf-8")
            env = bench_env(work, settings_for(model))
            init = (
                b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
            )
            for index, build in enumerate(found):
                python = str(build.earshot.parent / "python")
                bare = count([python, "-c", "pass"], workspace, env=env)
                floor = count([python, "-c", "import asyncio"], workspace, env=env)
                server = [python, str(build.earshot), "--stdio"]
                replied = to_reply(server, workspace, stdin=init, env=env)
                reply = count(server, workspace, stdin=init, env=env)
                settled = session_run(build, work, model, 0, f"b{index}a")
                more = session_run(build, work, model, args.turns, f"b{index}b")
                per_turn = (more - settled) / args.turns
                rows.append(
                    f"| {build.label} | {bare / 1e6:.0f}M | {floor / 1e6:.0f}M | "
                    f"{'-' if replied is None else f'{replied / 1e6:.0f}M'} | "
                    f"{reply / 1e6:.0f}M | {settled / 1e6:.0f}M | {per_turn / 1e6:.1f}M |"
                )
                print(rows[-1], flush=True)
    finally:
        model.close()
    command = "python bench/instructions.py" + (f" --turns {args.turns}" if args.turns != 4 else "")
    command += "".join(f" --tree {tree}" for tree in args.tree)
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}` (its docstring says what each column counts). Date: "
            f"{time.strftime('%Y-%m-%d')}. Instructions (callgrind's Ir) do not depend on the "
            "machine's load.",
            "",
            "| build | `python -c pass` | `import asyncio` | start -> `initialize` reply "
            "| `initialize` (start, reply, exit) | a session opened, one prompt, settled "
            "| one more turn |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            *rows,
            "",
            *(f"- {b.label}: {b.where}" for b in found),
            "",
        ]
    )
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
