"""The generated modules: the model's items grouped by area, the method tables, formatted."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scripts.gen_acp_types.model import Item, Model, SchemaError, refs_in

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "acp_server" / "schema"
OUTPUT_DIR = ROOT / "acp_server" / "protocol"
PACKAGE = "acp_server.protocol"

METHOD_AREAS: dict[str, tuple[str, ...]] = {
    "connection": ("initialize", "authenticate", "logout", "auth/", "providers/", "proxy/", "mcp/"),
    "sessions": (
        "session/new",
        "session/load",
        "session/resume",
        "session/fork",
        "session/list",
        "session/delete",
        "session/close",
        "session/archive",
        "session/unarchive",
        "session/status",
        "session/set_title",
        "session/set_mode",
        "session/set_config_option",
    ),
    "prompt": ("session/prompt", "session/update", "session/cancel"),
    "client": ("session/request_permission", "fs/", "terminal/"),
    "elicitation": ("elicitation/",),
    "common": ("$/",),
}
"""Which module a method's types go to. A type used by methods of several areas goes to `common`.
A new method must be placed here (the generator stops on one it cannot place)."""

AREA_DOCS: dict[str, str] = {
    "common": "Types shared by several areas: ids, content blocks, tool calls, errors, JSON.",
    "connection": "`initialize`, `authenticate`, `logout`: capabilities, auth methods.",
    "sessions": "Session lifecycle: `session/new|load|resume|list|delete|close|set_*`.",
    "prompt": "A turn: `session/prompt`, `session/update` (every update kind), `session/cancel`.",
    "client": "Methods the client answers: `session/request_permission`, `fs/*`, `terminal/*`.",
    "elicitation": "`elicitation/create` and `elicitation/complete`: questions for the user.",
}

HEADER = '''{doc}

Generated from acp_server/schema/{schema} by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""
'''


def docstring_head(text: str) -> str:
    """A module docstring's opening: its first paragraph wrapped to fit after the quotes."""
    first, _, rest = text.partition("\n\n")
    head = "\n".join(textwrap.wrap(" ".join(first.split()), width=97, initial_indent='"""'))
    return f"{head}\n\n{rest}" if rest else head


# ----------------------------------------------------------------------------- modules


V2_METHOD_AREAS: dict[str, str] = {"tool_call/cancel": "prompt", "terminal/cancel": "prompt"}
"""v2's methods whose area differs from v1's prefixes: the agent answers them during a turn."""


def method_area(method: str) -> str:
    if method in V2_METHOD_AREAS:
        return V2_METHOD_AREAS[method]
    for area, prefixes in METHOD_AREAS.items():
        if any(method == p or (p.endswith("/") and method.startswith(p)) for p in prefixes):
            return area
    raise SchemaError(f"method {method!r} has no area: add it to METHOD_AREAS")


def def_areas(model: Model) -> dict[str, str]:
    """Each definition's area: the one area of the methods that use it, else `common`.

    Everything a type uses is then in its own area or in `common`, so the modules import
    only `common` and never each other in a cycle."""
    labels: dict[str, set[str]] = {n: set() for n in model.defs if n not in model.skipped}
    for name, definition in model.defs.items():
        if name in labels and "x-method" in definition:
            labels[name].add(method_area(definition["x-method"]))
    uses = {name: refs_in(model.defs[name]) for name in labels}
    for _ in range(2):  # the second pass spreads `common` from the types no method uses
        changed = True
        while changed:
            changed = False
            for name, used in uses.items():
                for target in used:
                    if not labels[name] <= labels[target]:
                        labels[target] |= labels[name]
                        changed = True
        for label in labels.values():
            if not label:
                label.add("common")
    return {name: min(label) if len(label) == 1 else "common" for name, label in labels.items()}


@dataclass
class Module:
    name: str
    doc: str
    schema: str
    items: list[Item] = field(default_factory=list[Item])
    prelude: str = ""
    body: str = ""

    def text(self, home: Mapping[str, str]) -> str:
        """The module's source, importing what it uses from the modules `home` names."""
        chunks = [self.prelude] if self.prelude else []
        chunks += [item.code() for item in self.items]
        if self.body:
            chunks.append(self.body)
        code = "\n\n\n".join(chunks)
        defined = {item.name for item in self.items} | defined_names(self.prelude + self.body)
        imports = typing_imports(code)
        by_module: dict[str, set[str]] = {}
        for name in sorted(used_names(code) - defined):
            if name in home:
                by_module.setdefault(home[name], set()).add(name)
        for module, names in sorted(by_module.items()):
            imports.append(f"from {PACKAGE}.{module} import {', '.join(sorted(names))}")
        header = HEADER.format(doc=docstring_head(self.doc), schema=self.schema)
        imports_text = "\n".join(imports)
        # No `from __future__ import annotations`: TypedDict reads `NotRequired` off evaluated
        # annotations only (`__required_keys__`), and evaluating them is cheaper than compiling
        # a ForwardRef per field. The items come in dependency order, so every name is defined.
        return f"{header}\n{imports_text}\n\n\n{code}\n"


TYPING_NAMES = ("Final", "Literal", "NotRequired", "Protocol", "TypeAlias", "TypedDict", "final")
ABC_NAMES = ("Awaitable", "Callable", "Mapping", "Sequence")


def typing_imports(code: str) -> list[str]:
    imports: list[str] = []
    for module, names in (("collections.abc", ABC_NAMES), ("typing", TYPING_NAMES)):
        used = [n for n in names if re.search(rf"(?<![\w.]){n}\b", strip_strings(code))]
        if "@overload" in code and module == "typing":
            used.append("overload")
        if used:
            imports.append(f"from {module} import {', '.join(used)}")
    return imports


def used_names(code: str) -> set[str]:
    return set(re.findall(r"\b[A-Z][A-Za-z0-9]*\b", strip_strings(code)))


def defined_names(code: str) -> set[str]:
    return set(re.findall(r"^(?:class )?([A-Za-z_]\w*)\b", code, re.MULTILINE))


def strip_strings(code: str) -> str:
    return re.sub(r'"""(?:.|\n)*?"""|"[^"\n]*"', '""', code)


JSON_PRELUDE = '''JsonValue: TypeAlias = (
    Mapping[str, "JsonValue"] | Sequence["JsonValue"] | str | int | float | bool | None
)
"""Any JSON value. Read-only containers, so a `dict[str, str]` or a tuple is one too."""

JsonObject: TypeAlias = Mapping[str, JsonValue]
"""A JSON object with any members: `_meta`, `rawInput`, extension params."""'''


def area_modules(
    model: Model, items: Iterable[Item], package: str, schema: str, delta_of: str | None = None
) -> list[Module]:
    """The items grouped into one module per area (areas without items have no module).
    `delta_of`: the package (under `PACKAGE`) these items are a delta of, if they are one."""
    areas = def_areas(model)
    modules: dict[str, Module] = {}
    for item in items:
        area = areas[item.owner]
        if area not in modules:
            doc = AREA_DOCS[area]
            if package.startswith("v2."):
                doc = f"ACP v2 (draft): {doc[0].lower()}{doc[1:]}"
            if delta_of is not None:
                doc = f"Unstable {area}: what is new or differs from `{PACKAGE}.{delta_of}{area}`."
            modules[area] = Module(package + area, doc, schema)
        modules[area].items.append(item)
    return [modules[area] for area in AREA_DOCS if area in modules]


def unstable_delta(stable: Model, unstable: Model) -> list[Item]:
    """The unstable items that differ from the stable ones, or use one that does."""
    changed = {
        name
        for name, item in unstable.items.items()
        if name not in stable.items or stable.items[name].signature() != item.signature()
    }
    grew = True
    while grew:
        grew = False
        for name, item in unstable.items.items():
            if name not in changed and item.refs() & changed:
                changed.add(name)
                grew = True
    return [item for name, item in unstable.items.items() if name in changed]


# ----------------------------------------------------------------------------- method tables

SIDE_DOCS = {
    "agent": ("Requests the agent answers", "Notifications the agent receives"),
    "client": ("Requests the client answers", "Notifications the client receives"),
    "proxy": ("Requests a proxy answers", "Notifications a proxy receives"),
    "protocol": ("", "Notifications either side may send and receive"),
}


def methods_module(model: Model, name: str, schema: str, doc: str) -> Module:
    lines: list[str] = []
    for side in ("agent", "client", "proxy", "protocol"):
        requests = [m for m in model.methods if m.side == side and m.result is not None]
        notifications = [m for m in model.methods if m.side == side and m.result is None]
        request_doc, notification_doc = SIDE_DOCS[side]
        if requests:
            lines += [
                f"{side.upper()}_REQUESTS: Final[Mapping[str, tuple[str, str]]] = {{",
                *(f'    "{m.name}": ("{m.params}", "{m.result}"),' for m in requests),
                "}",
                f'"""{request_doc}: method -> (`$defs` names of its params, its result)."""\n',
            ]
        if notifications:
            lines += [
                f"{side.upper()}_NOTIFICATIONS: Final[Mapping[str, str]] = {{",
                *(f'    "{m.name}": "{m.params}",' for m in notifications),
                "}",
                f'"""{notification_doc}: method -> `$defs` name of its params."""\n',
            ]
    protocol = [m for m in model.methods if m.side == "protocol"]
    for side, peer in (("agent", "client"), ("client", "agent")):
        requests = [m for m in model.methods if m.side == side and m.result is not None]
        notifications = [m for m in model.methods if m.side == side and m.result is None] + protocol
        title = side.capitalize()
        request_names = ", ".join(json.dumps(m.name) for m in requests)
        notification_names = ", ".join(json.dumps(m.name) for m in notifications)
        lines += [
            f"{title}RequestMethod: TypeAlias = Literal[{request_names}]",
            f'"""The requests the {side} answers."""\n',
            f"{title}NotificationMethod: TypeAlias = Literal[{notification_names}]",
            f'"""The notifications the {side} receives."""\n',
            f'{title}RequestHandlers = TypedDict("{title}RequestHandlers", {{',
            *(f'    "{m.name}": Callable[[{m.params}], Awaitable[{m.result}]],' for m in requests),
            "}, total=False)",
            f'"""A table of the {side}\'s request handlers, checked method by method."""\n',
            f'{title}NotificationHandlers = TypedDict("{title}NotificationHandlers", {{',
            *(f'    "{m.name}": Callable[[{m.params}], Awaitable[None]],' for m in notifications),
            "}, total=False)",
            f'"""A table of the {side}\'s notification handlers."""\n',
        ]
        lines += sender(
            f"{title}RequestSender",
            f"How the {peer} sends a request the {side} answers; the result fits the method.",
            [(m.name, m.params, f"Awaitable[{m.result}]") for m in requests],
        )
        lines += sender(
            f"{title}NotificationSender",
            f"How the {peer} sends a notification the {side} receives.",
            [(m.name, m.params, "Awaitable[None]") for m in notifications],
        )
    return Module(name, doc, schema, body="\n".join(lines))


def sender(name: str, doc: str, calls: list[tuple[str, str, str]]) -> list[str]:
    lines = [f"class {name}(Protocol):", f'    """{doc}"""', ""]
    for method, params, result in calls:
        if len(calls) > 1:
            lines.append("    @overload")
        signature = f'self, method: Literal["{method}"], params: {params}, /'
        lines.append(f"    def __call__({signature}) -> {result}: ...")
    return [*lines, "\n"]


def load(name: str) -> Model:
    return Model(json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8")))


def family(
    stable_schema: str, unstable_schema: str, package: str, unstable_doc: str
) -> dict[str, str]:
    """One protocol version's modules (unformatted): its stable types under `package`, and
    what its unstable schema adds or changes under `package` + `unstable.`."""
    stable, unstable = load(stable_schema), load(unstable_schema)
    modules = area_modules(stable, stable.items.values(), package, stable_schema)
    modules[0].prelude = JSON_PRELUDE
    home = {item.name: m.name for m in modules for item in m.items}
    home |= {"JsonValue": modules[0].name, "JsonObject": modules[0].name}
    methods_doc = "The {} methods: who handles each, with what params and result; typed tables."
    if package:
        methods_doc = "ACP v2 (draft): t" + methods_doc[1:]
    stable_methods = methods_module(
        stable, package + "methods", stable_schema, methods_doc.format("stable")
    )
    modules.append(stable_methods)
    sources = {module_path(m.name): m.text(home) for m in modules}

    delta = unstable_delta(stable, unstable)
    modules = area_modules(unstable, delta, package + "unstable.", unstable_schema, package)
    home |= {item.name: m.name for m in modules for item in m.items}
    doc = methods_doc.format("stable and unstable")
    modules.append(methods_module(unstable, package + "unstable.methods", unstable_schema, doc))
    sources |= {module_path(m.name): m.text(home) for m in modules}
    init = HEADER.format(doc=docstring_head(unstable_doc), schema=unstable_schema)
    sources[module_path(package + "unstable.__init__")] = init
    return sources


UNSTABLE_DOC = """The unstable ACP surface (`schema.unstable.json`): `session/fork`, `providers/*`.

Only what is new or differs from the stable types is defined here, one module per area as in
the stable package; a type not found here is the stable one. `unstable.methods` lists every
method, stable ones included, with the unstable types."""


V2_DOC = """ACP v2 (the draft, `schema/v2/schema.json`): the typed wire of a v2 connection.

The same areas and mapping as the v1 package (`acp_server.protocol`), generated whole from the v2
schema: v2 renames and reshapes most messages (`info` and `capabilities` in `initialize`,
`tool_call_update` upserts, `state_update`, prompts answered with the inserted `messageId`), so
nothing is shared with v1. `v2.unstable` holds what `schema/v2/schema.unstable.json` adds."""

V2_UNSTABLE_DOC = """The unstable ACP v2 surface (`v2/schema.unstable.json`): what it adds to v2.

Only what is new or differs from the v2 stable types is defined here, one module per area as in
the v2 package; a type not found here is the v2 stable one. `v2.unstable.methods` lists every
method, stable ones included, with the unstable types."""


def generate() -> dict[str, str]:
    """Every generated module: path under acp_server/protocol -> source."""
    sources = family("schema.json", "schema.unstable.json", "", UNSTABLE_DOC)
    sources |= family("v2/schema.json", "v2/schema.unstable.json", "v2.", V2_UNSTABLE_DOC)
    sources["v2/__init__.py"] = HEADER.format(doc=docstring_head(V2_DOC), schema="v2/schema.json")
    return formatted(sources)


def module_path(module: str) -> str:
    return module.replace(".", "/") + ".py"


def formatted(sources: dict[str, str]) -> dict[str, str]:
    """The modules as ruff leaves them (imports sorted, formatted), with the project's settings:
    written to a scratch directory and formatted there in two ruff runs, not two per module."""
    config = str(ROOT / "pyproject.toml")
    with tempfile.TemporaryDirectory(prefix="gen_acp_types-") as scratch:
        base = Path(scratch)
        for name, source in sources.items():
            (base / name).parent.mkdir(parents=True, exist_ok=True)
            (base / name).write_text(source, encoding="utf-8")
        for command in (["check", "--select", "I", "--fix", "--exit-zero"], ["format"]):
            subprocess.run(
                [sys.executable, "-m", "ruff", *command, "--quiet", "--no-cache"]
                + ["--config", config, str(base)],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            )
        return {name: (base / name).read_text(encoding="utf-8") for name in sources}
