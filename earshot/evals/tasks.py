"""Evaluation tasks on disk, and the self-contained payload one run of a task needs.

A task is a directory:

    task.json      {"prompt": ..., "check": "python3 -m unittest", "mode": "accept-edits",
                    "language": "python", "description": ..., "timeout": 300}
    repo/          the repository snapshot the agent starts from (copied fresh for each run)
    check/         optional: files copied over the work copy just before the check runs
                   (hidden tests, and the tests the agent must not weaken: its changes to
                   these paths are overwritten)
    <name>.json    optional scripted-model files (`--scripted <name>`), e.g. solution.json

A task set is a directory of task directories (or one task directory). The payload carries the
files themselves, not paths, so a run can happen on another machine (Ray).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast, get_args

from agent.modes import Mode

TASK_FILE = "task.json"
DEFAULT_TIMEOUT = 600.0
DEFAULT_CHECK_TIMEOUT = 300.0
MAX_FILE_BYTES = 5_000_000


class TaskError(ValueError):
    """A task directory that is not a valid task (the message names the file)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileBlob:
    path: str
    """Relative, `/`-separated."""
    data: bytes
    executable: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    name: str
    directory: Path
    prompt: str
    check: str
    mode: Mode
    language: str = ""
    description: str = ""
    timeout: float = DEFAULT_TIMEOUT
    check_timeout: float = DEFAULT_CHECK_TIMEOUT


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskPayload:
    """Everything one run needs, by value."""

    name: str
    prompt: str
    check: str
    mode: Mode
    timeout: float
    check_timeout: float
    files: tuple[FileBlob, ...]
    check_files: tuple[FileBlob, ...] = ()
    script: bytes | None = None
    """A scripted-model file to play instead of a real model."""
    model: str | None = None
    """`provider/model` (None: the settings' default; ignored with a script)."""
    keep: bool = False
    """Keep the work directory (its path is in the result)."""
    user_gate: str | None = None
    """For a scripted run (private settings): the user's own `permissions` and `sandbox`
    settings, as JSON, which those settings keep: what the user allows holds for a task too."""


def load_tasks(root: Path, only: Sequence[str] = ()) -> list[Task]:
    """The tasks under `root` (a task directory, or a directory of them), sorted by name.

    Raises:
        TaskError: no task found, an `only` name that matches none, or an invalid task.
    """
    if not root.is_dir():
        raise TaskError(f"{root}: not a directory")
    directories = (
        [root]
        if (root / TASK_FILE).is_file()
        else sorted(child for child in root.iterdir() if (child / TASK_FILE).is_file())
    )
    if not directories:
        raise TaskError(f"{root}: no task (a directory with a {TASK_FILE}) found")
    tasks = [load_task(directory) for directory in directories]
    if only:
        unknown = sorted(set(only) - {task.name for task in tasks})
        if unknown:
            raise TaskError(f"no task named {', '.join(unknown)} in {root}")
        tasks = [task for task in tasks if task.name in only]
    return tasks


def load_task(directory: Path) -> Task:
    path = directory / TASK_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TaskError(f"{path}: {exc}") from None
    if not isinstance(raw, dict):
        raise TaskError(f"{path}: must be a JSON object")
    data = cast("dict[str, Any]", raw)
    prompt, check, mode = data.get("prompt"), data.get("check"), data.get("mode", "accept-edits")
    if not isinstance(prompt, str) or not prompt.strip():
        raise TaskError(f"{path}: `prompt` must be a non-empty string")
    if not isinstance(check, str) or not check.strip():
        raise TaskError(f"{path}: `check` must be a non-empty shell command")
    if mode not in get_args(Mode):
        raise TaskError(f"{path}: `mode` must be one of {', '.join(get_args(Mode))}")
    if not (directory / "repo").is_dir():
        raise TaskError(f"{directory}: no repo/ directory (the snapshot the agent starts from)")
    return Task(
        name=directory.name,
        directory=directory,
        prompt=prompt,
        check=check,
        mode=cast("Mode", mode),
        language=str(data.get("language", "")),
        description=str(data.get("description", "")),
        timeout=_seconds(data.get("timeout"), DEFAULT_TIMEOUT, path),
        check_timeout=_seconds(data.get("check_timeout"), DEFAULT_CHECK_TIMEOUT, path),
    )


def _seconds(value: object, default: float, path: Path) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise TaskError(f"{path}: timeouts are positive numbers of seconds")
    return float(value)


def check_modes(tasks: Sequence[Task], most: Mode) -> None:
    """Refuse a task set whose tasks ask for a more permissive mode than `most`, the most the
    user allows on the command line (`--max-mode`): a task directory is someone else's, and
    `yolo` lets its model write anywhere the tools reach without the gate asking.

    Raises:
        TaskError: naming the tasks and the flag that would allow them.
    """
    from agent.settings import MODE_ORDER

    over = [task for task in tasks if MODE_ORDER[task.mode] > MODE_ORDER[most]]
    if over:
        listed = ", ".join(f"{task.name} ({task.mode})" for task in over)
        raise TaskError(
            f"tasks asking for a more permissive mode than {most}: {listed}; run them only if "
            f"you accept that mode, with --max-mode {over[0].mode} (or leave them out: --only)"
        )


def user_gate_settings(environ: Mapping[str, str]) -> str | None:
    """The `permissions` and `sandbox` sections of the user's settings file, as JSON (None when
    there is no file or neither section), for a scripted run's private settings.

    Raises:
        TaskError: the file cannot be read or is not a JSON object.
    """
    from agent.settings import settings_paths

    path = settings_paths(Path.cwd(), environ=environ)["user"]
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise TaskError(f"{path}: cannot read your settings ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise TaskError(f"{path}: settings must be a JSON object")
    sections = cast("dict[str, Any]", data)
    kept = {key: sections[key] for key in ("permissions", "sandbox") if key in sections}
    return json.dumps(kept) if kept else None


def payload(
    task: Task,
    *,
    model: str | None = None,
    scripted: str | None = None,
    keep: bool = False,
    timeout: float | None = None,
    user_gate: str | None = None,
) -> TaskPayload:
    """The run of `task` with a real model (`model`) or its `scripted` file.

    Raises:
        TaskError: the scripted file is missing, or a file cannot be read.
    """
    script: bytes | None = None
    if scripted is not None:
        script_path = task.directory / f"{scripted}.json"
        try:
            script = script_path.read_bytes()
        except OSError:
            raise TaskError(f"task {task.name} has no scripted file {script_path.name}") from None
    return TaskPayload(
        name=task.name,
        prompt=task.prompt,
        check=task.check,
        mode=task.mode,
        timeout=timeout if timeout is not None else task.timeout,
        check_timeout=task.check_timeout,
        files=read_tree(task.directory / "repo"),
        check_files=read_tree(task.directory / "check"),
        script=script,
        model=None if script is not None else model,
        keep=keep,
        user_gate=user_gate if script is not None else None,
    )


def read_tree(root: Path) -> tuple[FileBlob, ...]:
    """Every regular file under `root` (none when it does not exist); symbolic links and other
    special files are refused: a snapshot is copied by value."""
    if not root.is_dir():
        return ()
    blobs: list[FileBlob] = []
    for directory, _dirs, names in os.walk(root):
        for name in sorted(names):
            path = Path(directory) / name
            info = path.lstat()
            relative = path.relative_to(root).as_posix()
            if not stat.S_ISREG(info.st_mode):
                raise TaskError(f"{path}: only regular files can be part of a task")
            if info.st_size > MAX_FILE_BYTES:
                raise TaskError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
            blobs.append(
                FileBlob(
                    path=relative,
                    data=path.read_bytes(),
                    executable=bool(info.st_mode & stat.S_IXUSR),
                )
            )
    return tuple(sorted(blobs, key=lambda blob: blob.path))


def materialise(blobs: Sequence[FileBlob], root: Path) -> None:
    """Write `blobs` under `root` (over what is there).

    Raises:
        TaskError: a path that would leave `root`.
    """
    base = root.resolve()
    for blob in blobs:
        target = (base / blob.path).resolve()
        if base not in target.parents:
            raise TaskError(f"{blob.path}: outside the task directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        target.write_bytes(blob.data)
        target.chmod(0o755 if blob.executable else 0o644)
