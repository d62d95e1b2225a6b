"""The command sandbox itself, for real (bubblewrap): what a command may write, what it sees of
earshot, the network, the placeholders of missing protected places, and the command line."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent.protected_paths import protected_paths
from agent.sandbox import placeholders as sandbox_placeholders
from agent.sandbox.command_sandbox import Places, Sandbox, SandboxRefused, open_sandbox
from agent.sandbox.linux import bwrap_command, plan_mounts
from agent.settings import SandboxConfig
from agent.tool_env import add_credential_variables, tool_environment
from tests.agent.sandbox_lab import Lab, git, make_lab, needs_linux, write_npm_test_script
from tests.processes import Fifo, running_with_argv, unique_sleep, until_gone

pytestmark = needs_linux


@pytest.fixture
def lab(monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from make_lab(monkeypatch)


# ------------------------------------------------------------------------- what is writable


async def test_a_command_writes_inside_the_project(lab: Lab) -> None:
    sandbox = await lab.sandbox()
    result = await lab.run("echo made > new.txt && mkdir -p a/b && echo deep > a/b/c", sandbox)
    assert result.exit_code == 0, result.output
    assert (lab.project / "new.txt").read_text(encoding="utf-8") == "made\n"
    assert (lab.project / "a" / "b" / "c").read_text(encoding="utf-8") == "deep\n"
    assert sandbox.stopped(result.output, result.exit_code) is None


async def test_a_sandboxed_build_writes_its_outputs(lab: Lab) -> None:
    (lab.project / "src").mkdir()
    (lab.project / "src" / "main.c.txt").write_text("int main;\n", encoding="utf-8")
    (lab.project / "Makefile").write_text(
        "dist/out.txt: src/main.c.txt\n\tmkdir -p dist\n\tcp $< $@\n\techo built >> $@\n",
        encoding="utf-8",
    )
    sandbox = await lab.sandbox()
    shell_build = "mkdir -p dist && cp src/main.c.txt dist/out.txt && echo built >> dist/out.txt"
    build = "make" if shutil.which("make") else shell_build
    result = await lab.run(build, sandbox)
    assert result.exit_code == 0, result.output
    assert (lab.project / "dist" / "out.txt").read_text(encoding="utf-8") == "int main;\nbuilt\n"


async def test_the_temp_dir_is_the_sessions_own(lab: Lab) -> None:
    # /tmp and $TMPDIR inside are the session's private dir: written there, kept from one
    # command to the next, and gone with the session; the host's /tmp is out of sight.
    sandbox = await lab.sandbox()
    assert sandbox.temp is None  # made for the first command
    name = f"earshot-test-{os.getpid()}-{id(lab)}"
    result = await lab.run(f'echo t > /tmp/{name} && echo "$TMPDIR" && ls /tmp', sandbox)
    assert result.exit_code == 0, result.output
    assert sandbox.temp is not None
    assert result.output.splitlines()[0] == "/tmp"
    assert "pytest-of-" not in result.output  # the host's /tmp holds the test's own dirs
    assert (sandbox.temp / name).read_text(encoding="utf-8") == "t\n"
    assert not Path(tempfile.gettempdir(), name).exists()
    again = await lab.run(f"cat /tmp/{name}", sandbox)
    assert again.output == "t\n"
    temp = sandbox.temp
    sandbox.close()
    assert not temp.exists()


async def test_tools_on_the_path_under_the_hosts_tmp_run_and_stay_read_only(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CI runner's checkout in /tmp with its venv on $PATH: its tools (ruff for a verify
    # command, a language server) run inside the sandbox, but nothing is planted there, a
    # socket bound there stays covered, and the rest of the host's /tmp stays out of sight.
    tools = Path(tempfile.mkdtemp(prefix="earshot-tools-", dir="/tmp"))
    other = Path(tempfile.mkdtemp(prefix="earshot-other-checkout-", dir="/tmp"))
    server = socket.socket(socket.AF_UNIX)
    try:
        tool = tools / "earshot-hello"
        tool.write_text("#!/bin/sh\necho hello from the tools\n", encoding="utf-8")
        tool.chmod(0o755)
        (other / "notes").write_text("another checkout\n", encoding="utf-8")
        server.bind(str(tools / "service.sock"))
        server.listen(4)
        monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
        sandbox = await lab.sandbox()
        connect = (
            "import socket; s = socket.socket(socket.AF_UNIX); "
            f"s.connect('{tools}/service.sock'); print('reached')"
        )
        result = await lab.run(
            f"earshot-hello; touch {tools}/planted || echo refused; "
            f"cat {other}/notes || echo unseen; "
            f'{sys.executable} -c "{connect}" || echo covered',
            sandbox,
        )
        lines = result.output.splitlines()
        assert "hello from the tools" in lines, result.output
        assert "refused" in lines and not (tools / "planted").exists()
        assert "unseen" in lines and "another checkout" not in result.output
        assert "covered" in lines and "reached" not in lines
    finally:
        server.close()
        shutil.rmtree(tools, ignore_errors=True)
        shutil.rmtree(other, ignore_errors=True)


def test_an_exposed_directory_inside_a_writable_place_is_not_bound_again(lab: Lab) -> None:
    # A root under /tmp holding earshot's venv: the root's bind shows the venv already, and a
    # bind of its own would be resolved by bwrap after a command could swap it for a link.
    root = Path(tempfile.mkdtemp(prefix="earshot-root-", dir="/tmp"))
    tools = Path(tempfile.mkdtemp(prefix="earshot-tools-", dir="/tmp"))
    try:
        (root / ".venv").mkdir()
        places = Places(
            writable=(root,),
            protected=protected_paths([root]),
            network=True,
            temp=lab.base,
            exposed=(root / ".venv", tools),
        )
        assert plan_mounts(places, hidden=()).exposed == (tools,)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(tools, ignore_errors=True)


async def test_the_temp_dirs_of_a_killed_earshot_are_removed(lab: Lab) -> None:
    # An earshot that was killed left its private temp dir; one that runs keeps its own.
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = Path(tempfile.mkdtemp(prefix=f"earshot-sandbox-{dead.pid}-"))
    (left / "file").write_text("x", encoding="utf-8")
    running = Path(tempfile.mkdtemp(prefix=f"earshot-sandbox-{os.getppid()}-"))
    try:
        sandbox = await lab.sandbox()
        await lab.run("true", sandbox)
        assert not left.exists()
        assert running.exists()
    finally:
        shutil.rmtree(left, ignore_errors=True)
        shutil.rmtree(running, ignore_errors=True)


async def test_a_write_outside_fails_with_the_sandbox_error_and_is_recognised(lab: Lab) -> None:
    sandbox = await lab.sandbox()
    result = await lab.run(f"echo x > {lab.outside}/f", sandbox)
    assert result.exit_code != 0
    assert "Read-only file system" in result.output
    assert not (lab.outside / "f").exists()
    why = sandbox.stopped(result.output, result.exit_code)
    assert why is not None and "Read-only file system" in why


async def test_extra_writable_paths_from_the_settings_are_writable(lab: Lab) -> None:
    sandbox = await lab.sandbox(SandboxConfig(writable_paths=(lab.outside, lab.base / "absent")))
    result = await lab.run(f"echo x > {lab.outside}/f", sandbox)
    assert result.exit_code == 0, result.output
    assert (lab.outside / "f").read_text(encoding="utf-8") == "x\n"


async def test_a_second_root_is_writable_and_its_git_is_not(lab: Lab) -> None:
    other = lab.base / "other"
    other.mkdir()
    git(other, "init", "-q")
    sandbox = await lab.sandbox(None, other)
    result = await lab.run(f"echo x > {other}/f; echo y >> {other}/.git/config", sandbox)
    assert (other / "f").read_text(encoding="utf-8") == "x\n"
    assert "Read-only file system" in result.output
    assert "y" not in (other / ".git" / "config").read_text(encoding="utf-8").split()


async def test_a_worktree_cannot_write_the_repository_it_points_to(lab: Lab) -> None:
    worktree = lab.base / "worktree"
    git(lab.project, "worktree", "add", "-q", str(worktree))
    pointer = (worktree / ".git").read_text(encoding="utf-8")
    target = Path(pointer.removeprefix("gitdir:").strip())
    before = (target / "HEAD").read_text(encoding="utf-8")
    # The worktree alone is the root; the main repository is also made writable by the user.
    sandbox = await open_sandbox(SandboxConfig(writable_paths=(lab.project,)), (worktree,))
    result = await lab.run(f"echo evil > {target}/HEAD", sandbox, cwd=worktree)
    assert "Read-only file system" in result.output
    assert (target / "HEAD").read_text(encoding="utf-8") == before


# ------------------------------------------------------------------- controls: real work


async def test_git_status_and_diff_run_in_the_sandbox(lab: Lab) -> None:
    (lab.project / "README.md").write_text("changed\n", encoding="utf-8")
    sandbox = await lab.sandbox()
    result = await lab.run("git status --short && git diff --stat && git log --oneline", sandbox)
    assert result.exit_code == 0, result.output
    assert " M README.md" in result.output
    assert "init" in result.output


async def test_git_commit_is_stopped_and_recognised(lab: Lab) -> None:
    sandbox = await lab.sandbox()
    result = await lab.run("echo x > f && git add f", sandbox)
    assert result.exit_code != 0
    assert sandbox.stopped(result.output, result.exit_code) is not None
    assert git(lab.project, "status", "--short") == "?? f\n"


async def test_npm_run_test_with_arguments_runs(lab: Lab) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    write_npm_test_script(lab.project)
    sandbox = await lab.sandbox()
    result = await lab.run("npm run test -- -k x", sandbox)
    assert result.exit_code == 0, result.output
    assert (lab.project / "out.txt").read_text(encoding="utf-8") == "-k x"


# ----------------------------------------------------------- earshot's process and secrets


async def test_earshot_and_its_environment_are_out_of_sight(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-sentinel-builtin")
    monkeypatch.setenv("LAB_PROVIDER_KEY", "sentinel-configured")
    add_credential_variables(["LAB_PROVIDER_KEY"])
    sandbox = await lab.sandbox()
    result = await lab.run(
        "env; cat /proc/$PPID/environ /proc/1/environ; echo; echo PROCESSES; "
        "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; ls /proc | grep -c '^[0-9]'",
        sandbox,
    )
    assert result.exit_code == 0, result.output
    assert "sentinel" not in result.output
    processes = result.output.partition("PROCESSES")[2]
    # No process of the test (earshot's side) is visible: only bwrap's init, bash, cat...
    assert "pytest" not in processes
    assert sys.executable not in processes
    assert int(processes.strip().splitlines()[-1]) < 10


async def test_capabilities_are_dropped_even_for_root(lab: Lab) -> None:
    sandbox = await lab.sandbox()
    result = await lab.run("grep CapEff /proc/self/status", sandbox)
    assert result.output.split() == ["CapEff:", "0000000000000000"]


@pytest.mark.parametrize("hide", ["socket", "directory"])
async def test_a_hidden_service_socket_cannot_be_reached(lab: Lab, hide: str) -> None:
    # A service that would act for the command outside the sandbox (a D-Bus bus, Docker):
    # a socket can be connected to even on a read-only mount, so it must be hidden.
    service = lab.base / "run"
    service.mkdir()
    path = service / "bus.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(4)
    connect = (
        f'{sys.executable} -c "import socket; s = socket.socket(socket.AF_UNIX); '
        f"s.connect('{path}'); print('reached')\""
    )
    sandbox = await lab.sandbox()
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    try:
        for hidden, reached in (((), True), ((str(path if hide == "socket" else service),), False)):
            plan = plan_mounts(sandbox.places(), hidden=hidden)
            command = bwrap_command(bwrap, plan, ["bash", "-c", connect], cwd=lab.project)
            done = await anyio.run_process(command, check=False, env=tool_environment())
            assert ("reached" in done.stdout.decode()) is reached, done.stderr.decode()
    finally:
        server.close()


async def test_a_symlinked_protected_name_is_refused(lab: Lab) -> None:
    (lab.project / "elsewhere").mkdir()
    (lab.project / ".earshot").symlink_to("elsewhere")
    sandbox = await lab.sandbox()
    with pytest.raises(SandboxRefused, match=r"\.earshot is a symbolic link"):
        await lab.run("true", sandbox)


# -------------------------------------------------------------- placeholders and lifetime


async def test_a_missing_protected_directory_leaves_no_trace(lab: Lab) -> None:
    sandbox = await lab.sandbox()
    result = await lab.run("ls -a", sandbox)
    assert ".earshot" in result.output.split()  # the read-only placeholder, inside
    assert not os.path.lexists(lab.project / ".earshot")  # gone when the command ended
    record = lab.home / ".local" / "share" / "earshot" / "sandbox-placeholders"
    assert record.read_text(encoding="utf-8") == ""


async def test_a_missing_protected_file_reads_empty_cannot_be_written_and_leaves_no_trace(
    lab: Lab,
) -> None:
    # The home directory as a root: ~/.gitconfig and ~/.npmrc are missing protected FILES.
    sandbox = await lab.sandbox(None, lab.home)
    script = (
        "git init -q repo && git -C repo status --short && cat ~/.gitconfig ~/.npmrc && "
        "echo read; echo '[alias] st = !touch pwned' >> ~/.gitconfig; "
        "python3 -c \"open('$HOME/.npmrc', 'w').write('script-shell=/tmp/x')\""
    )
    result = await lab.run(script, sandbox, cwd=lab.home)
    assert "read" in result.output, result.output  # git and cat read an empty file
    assert (lab.home / "repo" / ".git").is_dir()
    assert result.output.count("Read-only file system") == 2, result.output
    assert not os.path.lexists(lab.home / ".gitconfig")  # the placeholders are gone
    assert not os.path.lexists(lab.home / ".npmrc")
    assert sandbox.stopped(result.output, result.exit_code) is not None


async def test_an_empty_protected_directory_of_the_user_is_kept(lab: Lab) -> None:
    (lab.project / ".earshot").mkdir()
    sandbox = await lab.sandbox()
    await lab.run("true", sandbox)
    assert (lab.project / ".earshot").is_dir()


async def test_a_placeholder_stays_while_another_command_runs(lab: Lab) -> None:
    sandbox = await lab.sandbox()
    up, go = Fifo(lab.project / "up"), Fifo(lab.project / "go")
    attack = "echo > up; read _ < go; echo '{}' > .earshot/settings.local.json"
    results: list[str] = []
    async with anyio.create_task_group() as group:

        async def attacker() -> None:
            results.append((await lab.run(attack, sandbox)).output)

        group.start_soon(attacker)
        with anyio.fail_after(30):
            await up.wait()  # the attacker's sandbox is up
            assert os.path.lexists(lab.project / ".earshot")
            # A second command starts and ends while the first still runs: it must not
            # remove the placeholder the first one stands on.
            assert (await lab.run("true", sandbox)).exit_code == 0
            assert os.path.lexists(lab.project / ".earshot")
            go.send()
    up.close()
    go.close()
    assert "Read-only file system" in results[0]
    assert not os.path.lexists(lab.project / ".earshot")


async def test_a_placeholder_stays_while_a_command_of_another_earshot_stands_on_it(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two earshot processes with data dirs of their own (`earshot eval` tasks, or a second
    # user profile) share the project: the second one's command mounts the first one's
    # placeholder read-only. Were the first to remove it when its own command ends, the mount
    # would be detached in the second one's namespace, and `.earshot/` writable there.
    sandbox = await lab.sandbox()
    fifos = {name: Fifo(lab.project / name) for name in ("up-a", "go-a", "up-b", "go-b")}
    attack = (
        "echo > up-b; read _ < go-b; mkdir -p .earshot; echo '{}' > .earshot/settings.local.json"
    )
    first_done = anyio.Event()
    results: list[str] = []
    async with anyio.create_task_group() as group:

        async def first() -> None:
            await lab.run("echo > up-a; read _ < go-a", sandbox)
            first_done.set()

        async def second() -> None:
            results.append((await lab.run(attack, sandbox)).output)

        with anyio.fail_after(30):
            monkeypatch.setenv("XDG_DATA_HOME", str(lab.base / "data-a"))
            group.start_soon(first)
            await fifos["up-a"].wait()  # the first placeholder is up
            monkeypatch.setenv("XDG_DATA_HOME", str(lab.base / "data-b"))
            group.start_soon(second)
            await fifos["up-b"].wait()  # the second command stands on it
            fifos["go-a"].send()
            await first_done.wait()
            assert os.path.lexists(lab.project / ".earshot")
            fifos["go-b"].send()
    for fifo in fifos.values():
        fifo.close()
    assert "Read-only file system" in results[0]
    assert not os.path.lexists(lab.project / ".earshot" / "settings.local.json")
    # The first earshot still has it on record: its next command removes it.
    monkeypatch.setenv("XDG_DATA_HOME", str(lab.base / "data-a"))
    assert (await lab.run("true", sandbox)).exit_code == 0
    assert not os.path.lexists(lab.project / ".earshot")


async def test_a_directory_locked_by_another_process_refuses_the_command_without_hanging(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Any process that can open the project can lock it (a command the model left running in
    # the background: `flock -x . sleep 1000 &`): the next command must not wait forever.
    monkeypatch.setattr(sandbox_placeholders, "DIRECTORY_LOCK_WAIT_SECONDS", 0.2)
    sandbox = await lab.sandbox()
    holder = os.open(lab.project, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with anyio.fail_after(30), pytest.raises(SandboxRefused, match="holds a lock"):
            await lab.run("true", sandbox)
    finally:
        os.close(holder)
    assert (await lab.run("true", sandbox)).exit_code == 0  # released: commands run again
    assert not os.path.lexists(lab.project / ".earshot")


async def test_a_timed_out_command_ends_everything_it_started(lab: Lab) -> None:
    sandbox = await lab.sandbox()
    sleep = unique_sleep(1000)
    result = await lab.run(f"setsid {sleep} & {sleep} & wait", sandbox, timeout=1.0)
    assert result.timed_out
    await until_gone(running_with_argv(sleep))


async def test_background_processes_end_with_the_command(lab: Lab) -> None:
    sandbox = await lab.sandbox()
    sleep = unique_sleep(1000)
    result = await lab.run(f"setsid {sleep} > /dev/null 2>&1 & echo started", sandbox)
    assert result.output == "started\n"
    await until_gone(running_with_argv(sleep))


# -------------------------------------------------------------------------- status


async def test_the_sandbox_is_off_when_the_settings_say_so(lab: Lab) -> None:
    sandbox = await open_sandbox(SandboxConfig(enabled=False), (lab.project,))
    assert sandbox.status == "off"
    assert not sandbox.active
    assert sandbox.notice() is None


async def test_no_sandbox_is_said_once(lab: Lab) -> None:
    sandbox = await open_sandbox(SandboxConfig(), (lab.project,), engine="bwrap is missing")
    assert sandbox.status == "unavailable"
    notice = sandbox.notice()
    assert notice is not None
    assert "bwrap is missing" in notice
    assert "every command will ask" in notice
    assert '"enabled": false' in notice


def test_places_are_canonical(lab: Lab) -> None:
    link = lab.base / "link"
    link.symlink_to(lab.project)
    sandbox = Sandbox(status="active", config=SandboxConfig(), roots=(link,))
    places: Places = sandbox.places()
    assert lab.project in places.writable
    assert link not in places.writable
    assert places.protected == protected_paths((link,))
