"""The settings files: their schema, the scopes read and merged (user, project, local, remembered),
the edits earshot makes to them, and the workspace trust that decides what a repository's own files
may do. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.settings.code import DEFAULT_VERIFY_TIMEOUT, CodeConfig, VerifyRule
    from agent.settings.edits import (
        append_rule,
        remove_rule,
        rewrite_settings,
        set_directory_trust,
        trusted_directories,
    )
    from agent.settings.sandbox import SandboxConfig
    from agent.settings.schema import HooksSettings, HttpServerSettings, LspServerSettings
    from agent.settings.scopes import (
        MODEL_ENV,
        REPOSITORY_SCOPES,
        HookRule,
        PermissionList,
        Scope,
        Settings,
        SettingsError,
        load_settings,
        read_settings_file,
        settings_paths,
    )
    from agent.settings.trust import MODE_ORDER, is_trusted, resolve_directory

__all__ = [
    "DEFAULT_VERIFY_TIMEOUT",
    "MODEL_ENV",
    "MODE_ORDER",
    "REPOSITORY_SCOPES",
    "CodeConfig",
    "HookRule",
    "HooksSettings",
    "HttpServerSettings",
    "LspServerSettings",
    "PermissionList",
    "SandboxConfig",
    "Scope",
    "Settings",
    "SettingsError",
    "VerifyRule",
    "append_rule",
    "is_trusted",
    "load_settings",
    "read_settings_file",
    "remove_rule",
    "resolve_directory",
    "rewrite_settings",
    "set_directory_trust",
    "settings_paths",
    "trusted_directories",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "code": ("DEFAULT_VERIFY_TIMEOUT", "CodeConfig", "VerifyRule"),
            "edits": (
                "append_rule",
                "remove_rule",
                "rewrite_settings",
                "set_directory_trust",
                "trusted_directories",
            ),
            "sandbox": ("SandboxConfig",),
            "schema": ("HooksSettings", "HttpServerSettings", "LspServerSettings"),
            "scopes": (
                "MODEL_ENV",
                "REPOSITORY_SCOPES",
                "HookRule",
                "PermissionList",
                "Scope",
                "Settings",
                "SettingsError",
                "load_settings",
                "read_settings_file",
                "settings_paths",
            ),
            "trust": ("MODE_ORDER", "is_trusted", "resolve_directory"),
        },
    )
