"""Permissions: the public face of the permission system (import from here).

Three modules, one job each:

- `agent.permissions.rules`: the rule syntax (`Tool`, `Tool(pattern)`) and whether a rule matches
  a call (commands segment by segment, resolved paths, domains, MCP names).
- `agent.permissions.policy`: the pure `decide`, whose ORDER IS THE POLICY (deny first, then
  read-only, plan, writes outside the roots, yolo, ask rules, allow rules, the mode).
- `agent.permissions.gate`: `PermissionGate`, which applies `decide` to each call and asks the
  user, and is the only place a rule can be added (by the user's answer to a prompt).

`decide` lives in its own module rather than here so that the gate can import it while this
module re-exports the gate, without an import cycle.
"""

from __future__ import annotations

from agent.permissions.gate import GateOutcome, PermissionGate, PersistRule, propose_rules
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
    "PermissionGate",
    "PermissionRules",
    "PersistRule",
    "Rule",
    "command_regex",
    "decide",
    "lexical_path",
    "parse_rule",
    "propose_rules",
    "resolve_path",
]
