"""Issue 24, item 6: a deny rule on a file also denies its other names (hard links).

`ln .env env_hard` gives `.env` a second name no rule mentions; reading it under that name must
be refused like reading `.env` itself, by the read tool and in grep's results, whatever the
rule's form (`./.env`, a name pattern, a directory). Each attack is also run with the search
for other names switched off, to show it reads the secret without the defence.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.permissions import PermissionRules
from agent.permissions import policy as permission_policy
from tests.security.races import Lab, ToolRunner, leaked, make_lab, result_text

ENV_SECRET = "DATABASE_PASSWORD=env-secret-91c2"
TOKEN_SECRET = "TOKEN=token-secret-4be0"


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    lab = make_lab(tmp_path)
    (lab.project / ".env").write_text(ENV_SECRET + "\n", encoding="utf-8")
    secrets = lab.project / "secrets"
    secrets.mkdir()
    (secrets / "token").write_text(TOKEN_SECRET + "\n", encoding="utf-8")
    os.link(lab.project / ".env", lab.project / "env_hard")
    os.link(secrets / "token", lab.project / "token_hard")
    return lab


def no_other_names(*args: object) -> list[Path]:
    return []


RULES = {
    "literal": ("Read(./.env)", "env_hard", ENV_SECRET),
    "name": ("Read(.env)", "env_hard", ENV_SECRET),
    "directory": ("Read(./secrets/**)", "token_hard", TOKEN_SECRET),
}


@pytest.mark.parametrize("form", sorted(RULES))
@pytest.mark.parametrize("defended", [True, False], ids=["defended", "undefended"])
async def test_a_hard_link_to_a_denied_file_is_denied_too(
    lab: Lab, form: str, defended: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule, name, secret = RULES[form]
    if not defended:
        monkeypatch.setattr(permission_policy, "other_names", no_other_names)
    runner = ToolRunner(lab, rules=PermissionRules.parse(deny=[rule]))
    read = await runner.call("read", path=name)
    found = await runner.call("grep", pattern="secret")
    shown = result_text(read) + result_text(found)
    if defended:
        assert read.is_error
        assert "another name (a hard link)" in result_text(read)
        assert secret not in shown
    else:
        assert secret in result_text(read)  # the attack works without the defence
        assert secret in result_text(found)


async def test_a_hard_link_to_a_secret_outside_is_denied(lab: Lab) -> None:
    # ~/.ssh on the same file system as the project: `ln ~/.ssh/id_ed25519 key` (no sandbox).
    os.link(lab.ssh / "id_ed25519", lab.project / "key")
    runner = ToolRunner(lab)
    read = await runner.call("read", path="key")
    assert read.is_error
    assert not leaked(result_text(read))


async def test_hard_links_to_ordinary_files_still_read(lab: Lab) -> None:
    os.link(lab.real / "notes.txt", lab.project / "notes_hard")
    runner = ToolRunner(lab, rules=PermissionRules.parse(deny=["Read(./.env)"]))
    read = await runner.call("read", path="notes_hard")
    assert "project notes A" in result_text(read)
    found = await runner.call("grep", pattern="project notes")
    assert "notes_hard" in result_text(found)
