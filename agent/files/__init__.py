"""How the file system is touched safely: paths opened as they were decided, regular files only,
locks shared between processes, a file's other names. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.files.hard_links import other_names
    from agent.files.lock import locked, locked_sync
    from agent.files.safe_paths import (
        READ_FLAGS,
        Decided,
        Expected,
        FileId,
        PathChanged,
        check_expected,
        check_regular,
        decided_now,
        directory_chain,
        exists_beneath,
        identify,
        open_directory,
        open_exact,
        open_for_reading,
        opened_directory,
        opened_place,
        read_descriptor,
        read_exact,
        replace_exact,
        replace_in,
    )

__all__ = [
    "READ_FLAGS",
    "Decided",
    "Expected",
    "FileId",
    "PathChanged",
    "check_expected",
    "check_regular",
    "decided_now",
    "directory_chain",
    "exists_beneath",
    "identify",
    "locked",
    "locked_sync",
    "open_directory",
    "open_exact",
    "open_for_reading",
    "opened_directory",
    "opened_place",
    "other_names",
    "read_descriptor",
    "read_exact",
    "replace_exact",
    "replace_in",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "hard_links": ("other_names",),
            "lock": ("locked", "locked_sync"),
            "safe_paths": (
                "READ_FLAGS",
                "Decided",
                "Expected",
                "FileId",
                "PathChanged",
                "check_expected",
                "check_regular",
                "decided_now",
                "directory_chain",
                "exists_beneath",
                "identify",
                "open_directory",
                "open_exact",
                "open_for_reading",
                "opened_directory",
                "opened_place",
                "read_descriptor",
                "read_exact",
                "replace_exact",
                "replace_in",
            ),
        },
    )
