"""Permissions: the room of the permission system; its face (import from here).

Three modules, one job each:

- `agent.permissions.rules`: the rule syntax (`Tool`, `Tool(pattern)`) and whether a rule matches
  a call (commands segment by segment, resolved paths, domains, MCP names).
- `agent.permissions.policy`: the pure `decide`, whose ORDER IS THE POLICY (deny first, then
  read-only, plan, writes outside the roots, yolo, ask rules, allow rules, the mode).
- `agent.permissions.gate`: `PermissionGate`, which applies `decide` to each call and asks the
  user, and is the only place a rule can be added (by the user's answer to a prompt).

`decide` lives in its own module rather than here so that the gate can import it while this
module re-exports the gate, without an import cycle.

See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.permissions.admin import PermissionAdmin, scope_paths, settings_reloader
    from agent.permissions.gate import (
        GateOutcome,
        PermissionGate,
        PersistRule,
        RuleBook,
        propose_rules,
    )
    from agent.permissions.policy import Decision, Outcome, decide
    from agent.permissions.rules import (
        PermissionRules,
        Rule,
        command_regex,
        lexical_path,
        parse_rule,
        resolve_path,
    )

__all__ = [
    "Decision",
    "GateOutcome",
    "Outcome",
    "PermissionAdmin",
    "PermissionGate",
    "PermissionRules",
    "PersistRule",
    "Rule",
    "RuleBook",
    "command_regex",
    "decide",
    "lexical_path",
    "parse_rule",
    "propose_rules",
    "resolve_path",
    "scope_paths",
    "settings_reloader",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "admin": ("PermissionAdmin", "scope_paths", "settings_reloader"),
            "gate": ("GateOutcome", "PermissionGate", "PersistRule", "RuleBook", "propose_rules"),
            "policy": ("Decision", "Outcome", "decide"),
            "rules": (
                "PermissionRules",
                "Rule",
                "command_regex",
                "lexical_path",
                "parse_rule",
                "resolve_path",
            ),
        },
    )
