"""Protected paths: `.git`, `.earshot`, earshot's own dirs and shell start-up files are covered,
through symlinks and at any depth inside the roots; ordinary project files are not."""

from __future__ import annotations

from pathlib import Path

from agent.protected_paths import protected_paths


def _lab(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    return project, {"HOME": str(home)}


def test_git_and_earshot_directories_are_protected_at_any_depth(tmp_path: Path) -> None:
    project, environ = _lab(tmp_path)
    protected = protected_paths([project], environ=environ)
    assert protected.covers(project / ".git" / "config")
    assert protected.covers(project / ".git" / "hooks" / "pre-commit")
    assert protected.covers(project / ".earshot" / "settings.local.json")
    assert protected.covers(project / "vendor" / "lib" / ".git" / "config")
    assert protected.covers(project / "sub" / ".earshot")
    assert not protected.covers(project / "src" / "main.py")
    assert not protected.covers(project / ".gitignore")
    assert not protected.covers(project / ".github" / "workflows" / "ci.yml")


def test_user_dirs_and_shell_start_up_files_are_protected(tmp_path: Path) -> None:
    project, environ = _lab(tmp_path)
    home = Path(environ["HOME"])
    protected = protected_paths([project], environ=environ)
    assert protected.covers(home / ".bashrc")
    assert protected.covers(home / ".profile")
    assert protected.covers(home / ".config" / "fish" / "config.fish")
    assert protected.covers(home / ".config" / "earshot" / "settings.json")
    assert protected.covers(home / ".local" / "share" / "earshot" / "sessions" / "x.jsonl")
    assert not protected.covers(home / "notes.txt")


def test_a_symlink_into_a_protected_place_is_protected(tmp_path: Path) -> None:
    project, environ = _lab(tmp_path)
    (project / "innocent").symlink_to(project / ".git" / "hooks")
    (project / "rc").symlink_to(Path(environ["HOME"]) / ".bashrc")
    protected = protected_paths([project], environ=environ)
    assert protected.covers(project / "innocent" / "post-checkout")
    assert protected.covers(project / "rc")


def test_a_git_pointer_file_protects_its_target(tmp_path: Path) -> None:
    project, environ = _lab(tmp_path)
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    real_git = project / ".git" / "worktrees" / "wt"
    real_git.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {real_git}\n", encoding="utf-8")
    protected = protected_paths([worktree], environ=environ)
    assert protected.covers(real_git / "HEAD")
    assert protected.covers(worktree / ".git")


def test_places_below_another_protected_place_are_not_listed_again(tmp_path: Path) -> None:
    """The sandbox mounts each listed place read-only: one inside another (the remembered answers
    inside earshot's config dir) could not get its mount point once the outer one is read-only."""
    project, environ = _lab(tmp_path)
    config = Path(environ["HOME"]) / ".config" / "earshot"
    protected = protected_paths(
        [project], environ=environ, settings_files=(config / "settings.json", config / "projects")
    )
    assert config.resolve() in protected.paths
    assert not [path for path in protected.paths if config.resolve() in path.parents]
    assert protected.covers(config / "projects" / "p-0123.json")


def test_autostart_places_credentials_and_zdotdir_are_protected(tmp_path: Path) -> None:
    project, environ = _lab(tmp_path)
    home = Path(environ["HOME"])
    zdotdir = tmp_path / "zsh"
    protected = protected_paths([project], environ={**environ, "ZDOTDIR": str(zdotdir)})
    for name in (
        ".bash_aliases",
        ".bashrc.d/x.sh",
        ".config/autostart/x.desktop",
        ".config/systemd/user/x.service",
        ".local/share/systemd/user/x.timer",
        ".local/bin/git",
        ".gitconfig",
        ".ssh/authorized_keys",
        ".aws/config",
    ):
        assert protected.covers(home / name), name
    assert protected.covers(zdotdir / ".zshrc")
    assert not protected.covers(home / ".local" / "share" / "notes.txt")


def test_a_place_the_user_opened_as_the_workspace_is_the_work(tmp_path: Path) -> None:
    _, environ = _lab(tmp_path)
    home = Path(environ["HOME"])
    nvim = home / ".config" / "nvim"
    nvim.mkdir(parents=True)
    protected = protected_paths([nvim], environ=environ)
    assert not protected.covers(nvim / "init.lua")
    assert protected.covers(home / ".bashrc")
    assert protected.covers(nvim / ".git" / "config")
    at_home = protected_paths([home], environ=environ)
    assert at_home.covers(home / ".config" / "nvim" / "init.lua")
