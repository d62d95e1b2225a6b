"""The `sandbox` settings key: its schema, and that a repository's settings can tighten the
sandbox but never weaken it until the workspace is trusted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.settings import (
    SandboxConfig,
    Settings,
    SettingsError,
    load_settings,
    set_directory_trust,
)
from agent.settings.schema import SandboxSettings, SettingsFile


def test_the_schema_reads_the_sandbox_key() -> None:
    parsed = SettingsFile.model_validate(
        {"sandbox": {"enabled": False, "network": False, "writablePaths": ["~/.cache", "/opt/x"]}}
    )
    assert parsed.sandbox == SandboxSettings(
        enabled=False, network=False, writable_paths=["~/.cache", "/opt/x"]
    )


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        ({"enabled": "no"}, "sandbox.enabled: must be true or false"),
        ({"network": 1}, "sandbox.network: must be true or false"),
        ({"writablePaths": ["relative/dir"]}, "sandbox.writablePaths.0: must be an absolute path"),
        ({"writablePaths": "/x"}, "sandbox.writablePaths: must be a list"),
        ({"readOnly": True}, "sandbox.readOnly: unknown key"),
    ],
)
def test_bad_sandbox_settings_are_named_without_their_value(
    section: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem) as raised:
        SettingsFile.model_validate({"sandbox": section})
    assert "relative/dir" not in str(raised.value)


def test_the_defaults_are_on_with_the_network(tmp_path: Path) -> None:
    assert Settings().sandbox == SandboxConfig(enabled=True, network=True, writable_paths=())
    assert load_settings(tmp_path, environ={"HOME": str(tmp_path)}).sandbox == SandboxConfig()


class Files:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.project.mkdir(parents=True)
        self.environ = {"HOME": str(self.home)}

    def user(self, data: dict[str, Any]) -> None:
        self._write(self.home / ".config" / "earshot" / "settings.json", data)

    def project_file(self, data: dict[str, Any]) -> None:
        self._write(self.project / ".earshot" / "settings.json", data)

    def local(self, data: dict[str, Any]) -> None:
        self._write(self.project / ".earshot" / "settings.local.json", data)

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")

    def load(self) -> Settings:
        return load_settings(self.project, environ=self.environ)

    def trust(self) -> None:
        set_directory_trust(self.project, True, environ=self.environ)


@pytest.fixture
def files(tmp_path: Path) -> Files:
    return Files(tmp_path)


def test_the_user_may_weaken_the_sandbox(files: Files) -> None:
    files.user({"sandbox": {"enabled": False, "network": False, "writablePaths": ["~/.cache"]}})
    settings = files.load()
    assert settings.sandbox == SandboxConfig(
        enabled=False, network=False, writable_paths=(files.home / ".cache",)
    )


def test_an_untrusted_project_cannot_weaken_the_sandbox(files: Files) -> None:
    files.user({"sandbox": {"network": False}})
    files.project_file(
        {"sandbox": {"enabled": False, "network": True, "writablePaths": ["/", "~"]}}
    )
    settings = files.load()
    assert settings.sandbox == SandboxConfig(enabled=True, network=False, writable_paths=())
    assert settings.ignored.sandbox == (
        "sandbox.enabled: false",
        "sandbox.network: true",
        "sandbox.writablePaths: /",
        "sandbox.writablePaths: ~",
    )
    notice = settings.ignored.notice(files.project)
    assert "sandbox.enabled: false" in notice
    assert "earshot trust" in notice


def test_an_untrusted_project_can_tighten_the_sandbox(files: Files) -> None:
    files.user({"sandbox": {"enabled": False}})
    files.project_file({"sandbox": {"enabled": True, "network": False}})
    settings = files.load()
    assert settings.sandbox == SandboxConfig(enabled=True, network=False)
    assert settings.ignored.sandbox == ()


def test_a_trusted_project_may_weaken_it(files: Files) -> None:
    files.trust()
    files.project_file({"sandbox": {"network": False, "writablePaths": ["/opt/cache"]}})
    files.local({"sandbox": {"network": True, "writablePaths": ["/opt/more"]}})
    settings = files.load()
    assert settings.sandbox == SandboxConfig(
        enabled=True, network=True, writable_paths=(Path("/opt/cache"), Path("/opt/more"))
    )


def test_a_local_file_in_the_project_weakens_it_only_once_trusted(files: Files) -> None:
    # The project's local file is repository content, whoever wrote it (agent.settings.trust).
    files.local({"sandbox": {"enabled": False}})
    assert files.load().sandbox.enabled is True
    files.trust()
    assert files.load().sandbox.enabled is False


def test_a_relative_writable_path_is_an_error_naming_the_file(files: Files) -> None:
    files.user({"sandbox": {"writablePaths": ["cache"]}})
    with pytest.raises(SettingsError, match=r"settings.json: invalid settings: "):
        files.load()
