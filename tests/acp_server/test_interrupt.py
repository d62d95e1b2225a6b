"""Ctrl-C never raises KeyboardInterrupt in the server (`acp_server.interrupt`): raised inside an
import it can leave the import lock held and hang the process (seen under load: "Exception
ignored in: <function _get_module_lock.<locals>.cb>" and no exit). Each case runs in a process
of its own that signals itself, so the moment is exact."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.acp_server.client import WAIT_SECONDS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

REPO = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path,
        env={"PYTHONPATH": f"{tmp_path}:{REPO}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )


def test_ctrl_c_in_the_middle_of_an_import_ends_the_process(tmp_path: Path) -> None:
    # A module that is being imported when Ctrl-C arrives (the server imports lazily all along).
    (tmp_path / "being_imported.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nprint('still importing')\n",
        encoding="utf-8",
    )
    done = _run(
        tmp_path,
        """
        from acp_server.interrupt import exit_on_interrupt
        exit_on_interrupt(b"bye\\n")
        import being_imported
        print("after the import")
        """,
    )
    assert done.returncode == 130
    assert done.stdout == ""
    assert done.stderr == "bye\n"  # no traceback, no "Exception ignored"


def test_while_the_loop_runs_ctrl_c_cancels_and_a_second_one_ends_at_once(tmp_path: Path) -> None:
    (tmp_path / "imported_while_winding_down.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nprint('still importing')\n",
        encoding="utf-8",
    )
    done = _run(
        tmp_path,
        """
        import os, signal
        import anyio
        from acp_server.interrupt import exit_on_interrupt, run_interruptible

        async def serve() -> None:
            try:
                os.kill(os.getpid(), signal.SIGINT)
                await anyio.sleep_forever()
            finally:
                print("cancelled", flush=True)
                import imported_while_winding_down  # and Ctrl-C again, mid-import
                print("never")

        exit_on_interrupt(b"second\\n")
        run_interruptible(serve)
        print("never")
        """,
    )
    assert done.stdout.splitlines() == ["cancelled"]
    assert done.returncode == 130
    assert done.stderr == "second\n"


def test_an_uninterrupted_run_says_so_and_its_error_is_raised_as_itself(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        """
        from acp_server.interrupt import exit_on_interrupt, run_interruptible

        import os, signal
        import anyio

        async def quick() -> None:
            pass

        async def interrupted() -> None:
            os.kill(os.getpid(), signal.SIGINT)
            await anyio.sleep_forever()

        async def fails() -> None:
            raise OSError(98, "address in use")

        exit_on_interrupt()
        print("interrupted:", run_interruptible(quick))
        print("interrupted:", run_interruptible(interrupted))
        try:
            run_interruptible(fails)
        except OSError as exc:
            print("raised:", exc)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "interrupted: False",
        "interrupted: True",
        "raised: [Errno 98] address in use",
    ]


def test_an_ignored_sigint_stays_ignored(tmp_path: Path) -> None:
    # A shell's background job starts with SIGINT ignored; the terminal's Ctrl-C is not for it.
    done = _run(
        tmp_path,
        """
        import os, signal
        import anyio
        from acp_server.interrupt import exit_on_interrupt, run_interruptible

        async def main() -> None:
            os.kill(os.getpid(), signal.SIGINT)
            await anyio.sleep(0)
            print("still running", flush=True)

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        exit_on_interrupt()
        os.kill(os.getpid(), signal.SIGINT)
        print("interrupted:", run_interruptible(main))
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["still running", "interrupted: False"]
