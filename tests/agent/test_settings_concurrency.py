"""Settings files edited by many sessions at once (issue 29): "always" answers saved at the same
moment by sessions of one process (threads here: the gate saves from whichever thread it runs
on) and by several processes are all kept, and a revoke never brings back or drops another
edit."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from agent.settings import append_rule, remove_rule

WRITERS = 20
RULES_EACH = 5
PROCESSES = 4


def rules_in(path: Path, list_name: str = "allow") -> list[str]:
    return json.loads(path.read_text(encoding="utf-8"))["permissions"][list_name]


def test_twenty_sessions_answering_always_at_once_keep_every_answer(tmp_path: Path) -> None:
    remembered = tmp_path / "projects" / "p.json"
    remembered.parent.mkdir()
    barrier = threading.Barrier(WRITERS)
    failures: list[BaseException] = []

    def session(number: int) -> None:
        barrier.wait()
        try:
            for rule in range(RULES_EACH):
                append_rule(remembered, "allow", f"Bash(tool{number}-{rule} *)")
        except BaseException as error:  # reported below, with the others
            failures.append(error)

    threads = [threading.Thread(target=session, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    expected = {f"Bash(tool{n}-{r} *)" for n in range(WRITERS) for r in range(RULES_EACH)}
    assert sorted(rules_in(remembered)) == sorted(expected)
    answered = json.loads(remembered.read_text(encoding="utf-8"))["answeredAt"]
    assert set(answered) == {f"allow:{rule}" for rule in expected}
    assert [p.name for p in remembered.parent.iterdir() if not p.name.startswith(".")] == ["p.json"]


def test_a_revoke_at_the_same_time_as_answers_removes_only_its_rule(tmp_path: Path) -> None:
    remembered = tmp_path / "p.json"
    append_rule(remembered, "allow", "Bash(revoked *)")
    barrier = threading.Barrier(WRITERS + 1)

    def answer(number: int) -> None:
        barrier.wait()
        append_rule(remembered, "allow", f"Bash(kept{number} *)")

    def revoke() -> None:
        barrier.wait()
        assert remove_rule(remembered, "remembered", lambda rule: rule == "Bash(revoked *)")

    threads = [threading.Thread(target=answer, args=(n,)) for n in range(WRITERS)]
    threads.append(threading.Thread(target=revoke))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(rules_in(remembered)) == sorted(f"Bash(kept{n} *)" for n in range(WRITERS))


ANSWERER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from agent.settings.edits import append_rule

    path, name = Path(sys.argv[1]), sys.argv[2]
    print("ready", flush=True)
    sys.stdin.readline()  # the barrier: every process is ready
    for rule in range(int(sys.argv[3])):
        append_rule(path, "allow", f"Bash({name}-{rule} *)")
    """
)


def test_four_processes_answering_always_at_once_keep_every_answer(tmp_path: Path) -> None:
    remembered = tmp_path / "p.json"
    root = Path(__file__).resolve().parents[2]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", ANSWERER, str(remembered), f"p{n}", "10"],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    try:
        for process in processes:
            assert process.stdout is not None and process.stdout.readline() == "ready\n"
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        for process in processes:
            _, errors = process.communicate(timeout=60)
            assert process.returncode == 0, errors
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    expected = {f"Bash(p{n}-{r} *)" for n in range(PROCESSES) for r in range(10)}
    assert sorted(rules_in(remembered)) == sorted(expected)


async def test_an_answer_or_a_revoke_in_one_session_applies_in_the_others(tmp_path: Path) -> None:
    from agent.permissions import (
        PermissionAdmin,
        PermissionGate,
        PermissionRules,
        RuleBook,
        scope_paths,
        settings_reloader,
    )
    from agent.settings import append_rule, load_settings
    from tests.agent.test_permissions_gate import FakeUser, bash, check

    cwd, config_home = tmp_path / "project", tmp_path / "config"
    cwd.mkdir()

    def session() -> tuple[PermissionGate, PermissionAdmin]:
        # as `agent.session.setup` builds them: the book reads the files again when they change
        settings = load_settings(cwd, environ={}, config_home=config_home)
        reload = settings_reloader(cwd, settings)
        book = RuleBook(
            PermissionRules.from_settings(settings),
            reload=lambda: PermissionRules.from_settings(reload()),
            files=tuple(scope_paths(settings, cwd).values()),
        )
        remembered = settings.remembered
        assert remembered is not None
        gate = PermissionGate(
            book,
            cwd=cwd,
            roots=[cwd],
            persist_rule=lambda list_name, rule: append_rule(remembered, list_name, rule),  # type: ignore[arg-type]
        )
        return gate, PermissionAdmin(cwd=cwd, settings=settings, gate=gate, book=book)

    (first, first_admin), (second, _) = session(), session()  # both open before the answer
    assert (await check(first, FakeUser(["allow_always"]), bash("make build"))).allowed
    applied = await check(second, FakeUser([]), bash("make build"))  # no prompt: no answer
    assert applied.allowed and applied.source == "remembered"

    assert applied.rule is not None
    assert "Revoked" in first_admin.run(f"revoke {applied.rule}").text
    user = FakeUser(["reject_once"])
    assert not (await check(second, user, bash("make build"))).allowed
    assert len(user.prompts) == 1  # asked again: the revoke reached the other session
