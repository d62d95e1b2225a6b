"""The schema read as Python: the TypedDicts and aliases one ACP schema defines, and its methods.

`Model(schema).items` are in dependency order (each item after every item it names), and
`Model(schema).methods` say who handles each method and with which params and result types.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

Schema: TypeAlias = dict[str, Any]

ENVELOPES: tuple[tuple[str, str, str, str], ...] = (
    ("agent", "ClientRequest", "AgentResponse", "ClientNotification"),
    ("client", "AgentRequest", "ClientResponse", "AgentNotification"),
    ("proxy", "ProxyRequest", "ProxyResponse", "ProxyNotification"),
)
"""(the side that handles them, its incoming requests, its responses, its incoming notifications)"""


# ----------------------------------------------------------------------------- type expressions


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Lit:
    values: tuple[str | int | bool, ...]


@dataclass(frozen=True)
class ListOf:
    item: Expr


@dataclass(frozen=True)
class DictOf:
    value: Expr


@dataclass(frozen=True)
class Union:
    members: tuple[Expr, ...]


Expr: TypeAlias = Name | Lit | ListOf | DictOf | Union

JSON_VALUE = Name("JsonValue")
JSON_OBJECT = Name("JsonObject")
BUILTIN_NAMES = frozenset({"str", "int", "float", "bool", "None", "JsonValue", "JsonObject"})
SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
ANNOTATION_KEYS = frozenset({"description", "title", "default", "format", "minimum", "maximum"})


def flatten(expr: Expr) -> list[Expr]:
    if isinstance(expr, Union):
        return [leaf for member in expr.members for leaf in flatten(member)]
    return [expr]


def union(members: Iterable[Expr]) -> Expr:
    """One union: nested unions flattened, literals merged into one `Literal`, `None` last."""
    leaves: list[Expr] = []
    literal_values: list[str | int | bool] = []
    has_none = False
    for member in members:
        for leaf in flatten(member):
            if isinstance(leaf, Lit):
                literal_values.extend(v for v in leaf.values if v not in literal_values)
            elif leaf == Name("None"):
                has_none = True
            elif leaf not in leaves:
                leaves.append(leaf)
    merged: list[Expr] = [Lit(tuple(literal_values))] if literal_values else []
    merged += leaves
    if has_none:
        merged.append(Name("None"))
    return merged[0] if len(merged) == 1 else Union(tuple(merged))


def render(expr: Expr) -> str:
    match expr:
        case Name(name):
            return name
        case Lit(values):
            return "Literal[" + ", ".join(json.dumps(v) for v in values) + "]"
        case ListOf(item):
            return f"list[{render(item)}]"
        case DictOf(value):
            return f"dict[str, {render(value)}]"
        case Union(members):
            return " | ".join(render(m) for m in members)


def names_in(expr: Expr) -> set[str]:
    match expr:
        case Name(name):
            return set() if name in BUILTIN_NAMES else {name}
        case Lit():
            return set()
        case ListOf(item):
            return names_in(item)
        case DictOf(value):
            return names_in(value)
        case Union(members):
            return {n for m in members for n in names_in(m)}


# ----------------------------------------------------------------------------- the model


@dataclass
class Struct:
    """One TypedDict class."""

    name: str
    owner: str
    fields: dict[str, tuple[Expr, bool]]
    doc: str

    def code(self) -> str:
        lines = ["@final", f"class {self.name}(TypedDict):", docstring(self.doc, 4)]
        for key, (expr, required) in self.fields.items():
            text = render(expr)
            lines.append(f"    {key}: {text if required else f'NotRequired[{text}]'}")
        return "\n".join(lines)

    def refs(self) -> set[str]:
        return {n for expr, _ in self.fields.values() for n in names_in(expr)}

    def signature(self) -> object:
        return ("struct", tuple((k, render(e), r) for k, (e, r) in self.fields.items()))


@dataclass
class Alias:
    name: str
    owner: str
    expr: Expr
    doc: str

    def code(self) -> str:
        return f"{self.name}: TypeAlias = {render(self.expr)}\n{docstring(self.doc, 0)}"

    def refs(self) -> set[str]:
        return names_in(self.expr)

    def signature(self) -> object:
        return ("alias", render(self.expr))


Item: TypeAlias = Struct | Alias


@dataclass(frozen=True)
class Shape:
    """One object shape a schema admits: its fields, and the class it already is, if any."""

    suffix: tuple[str, ...]
    """The variant's name parts (`("Form", "Session")`)."""
    fields: tuple[tuple[str, Expr, bool], ...]
    ref: str | None = None
    notes: tuple[str, ...] = ()
    """What picks the variant (`type: "text"`), for its docstring."""
    docs: tuple[str, ...] = ()

    def merged(self, other: Shape) -> Shape:
        suffix, notes = self.suffix + other.suffix, self.notes + other.notes
        docs = self.docs + other.docs
        if not self.fields and self.ref is None:
            return Shape(suffix, other.fields, other.ref, notes, docs)
        if not other.fields and other.ref is None:
            return Shape(suffix, self.fields, self.ref, notes, docs)
        fields = {key: (expr, required) for key, expr, required in self.fields}
        for key, expr, required in other.fields:
            fields[key] = (expr, required or fields.get(key, (expr, False))[1])
        return Shape(suffix, tuple((k, e, r) for k, (e, r) in fields.items()), None, notes, docs)

    def renamed(self, part: str, note: str, doc: str) -> Shape:
        docs = (doc, *self.docs) if doc else self.docs
        return Shape((part, *self.suffix), self.fields, self.ref, (note, *self.notes), docs)


def pascal(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", text))


def camel_words(name: str) -> list[str]:
    return re.findall(r"[A-Z][a-z0-9]*", name)


def without_common_prefix(name: str, owner: str) -> str:
    words, owner_words = camel_words(name), camel_words(owner)
    common = 0
    while common < min(len(words), len(owner_words)) and words[common] == owner_words[common]:
        common += 1
    return "".join(words[common:]) or name


def common_prefix(names: list[str]) -> str:
    """The leading CamelCase words all the names share."""
    split = [camel_words(name) for name in names]
    shared: list[str] = []
    for words in zip(*split, strict=False):
        if len(set(words)) != 1:
            break
        shared.append(words[0])
    return "".join(shared)


UNSTABLE_BOILERPLATE = frozenset(
    {
        "**UNSTABLE**",
        "This capability is not part of the spec yet, and may be removed or changed at any point.",
    }
)


def first_paragraph(description: str | None) -> str:
    """The description's first paragraph, past the unstable marker (the module says so)."""
    paragraphs = [" ".join(p.split()) for p in (description or "").split("\n\n")]
    paragraphs = [p for p in paragraphs if p and p not in UNSTABLE_BOILERPLATE]
    return paragraphs[0] if paragraphs else ""


def docstring(text: str, indent: int) -> str:
    pad = " " * indent
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text += "."
    # Wrapped so that even the first line fits with the closing quotes: ruff joins those to a
    # docstring of one line.
    lines = textwrap.wrap(text, width=100 - indent - 3, initial_indent='"""') or ['"""']
    if len(lines) == 1:
        return f'{pad}{lines[0]}"""'
    return "\n".join([*(pad + line for line in lines), f'{pad}"""'])


class SchemaError(Exception):
    pass


class Model:
    """The Python items one schema defines, in dependency order, and its method tables."""

    def __init__(self, schema: Schema) -> None:
        self.defs: dict[str, Schema] = schema["$defs"]
        self.skipped = {n for n, d in self.defs.items() if d.get("x-docs-ignore")}
        self.items: dict[str, Item] = {}
        self._shapes: dict[str, list[Shape]] = {}
        for name in self.defs:
            if name not in self.skipped:
                self._define(name)
        self.methods = self._methods()
        for method in self.methods:
            for name, role in ((method.params, "params"), (method.result, "result")):
                if name is not None and name in self.items:
                    item = self.items[name]
                    item.doc = f"{method.describe(role)} {item.doc}".strip()

    # -- definitions

    def _define(self, name: str) -> None:
        if name in self.items:
            return
        definition = self.defs[name]
        doc = first_paragraph(definition.get("description"))
        if self._is_object(definition):
            shapes = self.def_shapes(name)
            if len(shapes) == 1 and shapes[0].ref not in (None, name):
                self.items[name] = Alias(name, name, Name(shapes[0].ref or name), doc)
            elif len(shapes) > 1:
                members = tuple(Name(s.ref or name) for s in shapes)
                self.items[name] = Alias(name, name, union(members), doc)
        else:
            self.items[name] = Alias(name, name, self.expr(definition), doc)

    def _is_object(self, schema: Schema) -> bool:
        if "$ref" in schema:
            return self._is_object(self.defs[ref_name(schema["$ref"])])
        if schema.get("type") == "object" or "properties" in schema:
            return "properties" in schema or "additionalProperties" not in schema
        parts = [s for key in ("allOf", "anyOf", "oneOf") for s in schema.get(key, [])]
        if any(not set(part) - ANNOTATION_KEYS for part in parts):
            return False  # one alternative is any value (v2's `ErrorData`): an alias
        objects = [self._is_object(s) for s in parts]
        if any(objects) and not all(objects):
            raise SchemaError(f"a union of objects and non-objects: {json.dumps(schema)[:200]}")
        return bool(objects) and all(objects)

    def def_shapes(self, name: str) -> list[Shape]:
        """The shapes of a `$defs` object, each named and defined as a class (once)."""
        if name in self._shapes:
            return self._shapes[name]
        self._shapes[name] = []  # the schema has no reference cycles; this only guards
        raw = self.shapes(self.defs[name], name)
        doc = first_paragraph(self.defs[name].get("description"))
        named: list[Shape] = []
        for shape in raw:
            if shape.ref is not None:
                named.append(shape)
                continue
            if len(raw) == 1:
                class_name, class_doc = name, doc
            else:
                class_name = self._variant_name(name, shape.suffix)
                class_doc = " ".join((f"`{name}` variant: {', '.join(shape.notes)}.", *shape.docs))
            fields = {key: (expr, required) for key, expr, required in shape.fields}
            self.items[class_name] = Struct(class_name, name, fields, class_doc)
            named.append(Shape(shape.suffix, shape.fields, class_name, shape.notes, shape.docs))
        self._shapes[name] = named
        return named

    def _variant_name(self, owner: str, suffix: tuple[str, ...]) -> str:
        if not suffix:
            raise SchemaError(f"{owner}: a variant without a name")
        tag = "".join(suffix)
        for candidate in (owner + tag, tag + owner):
            if candidate not in self.defs and candidate not in self.items:
                return candidate
        raise SchemaError(f"{owner}: no free name for variant {tag}")

    def shapes(self, schema: Schema, owner: str) -> list[Shape]:
        if "$ref" in schema:
            return self.def_shapes(ref_name(schema["$ref"]))
        properties: dict[str, Schema] = schema.get("properties", {})
        required = set(schema.get("required", []))
        if not required <= set(properties):
            # a property named only in `required` of a variant: the schema never does this
            raise SchemaError(f"{owner}: required {sorted(required - set(properties))} undefined")
        base = Shape(
            (), tuple((key, self.expr(prop), key in required) for key, prop in properties.items())
        )
        result: list[Shape] = [base]
        parts: list[Schema] = schema.get("allOf", [])
        for sub in parts:
            result = [r.merged(s) for r in result for s in self.shapes(sub, owner)]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                alternatives: list[Schema] = schema[key]
                refs = [ref for ref in map(self._pure_ref, alternatives) if ref is not None]
                prefix = common_prefix(refs) if len(refs) > 1 else owner
                variants = [v for sub in alternatives for v in self._variant(sub, owner, prefix)]
                result = [r.merged(v) for r in result for v in variants]
        return result

    def _variant(self, schema: Schema, owner: str, prefix: str) -> list[Shape]:
        """The shapes of one alternative of a union, named after its tag (or what it is)."""
        inner = self.shapes(schema, owner)
        properties: dict[str, Schema] = schema.get("properties", {})
        tags = [(key, prop["const"]) for key, prop in properties.items() if "const" in prop]
        pure_ref = None if properties else self._pure_ref(schema)
        refs: list[Schema] = schema.get("allOf", [])
        doc = first_paragraph(schema.get("description"))
        if not doc and len(refs) == 1 and "$ref" in refs[0]:
            doc = first_paragraph(self.defs[ref_name(refs[0]["$ref"])].get("description"))
        if tags:
            part, note = pascal(str(tags[0][1])), f"`{tags[0][0]}: {json.dumps(tags[0][1])}`"
        elif "title" in schema:
            part, note = pascal(schema["title"]), str(schema["title"])
        elif pure_ref is not None:
            part, note = without_common_prefix(pure_ref, prefix), f"`{pure_ref}`"
        elif "not" in schema:
            part, note = "Other", f"any other `{', '.join(properties) or 'kind'}`"
        else:
            required: list[str] = schema.get("required", [])
            part, note = "".join(map(pascal, required)), f"with `{', '.join(required)}`"
        return [s.renamed(part, note, doc) for s in inner]

    def _pure_ref(self, schema: Schema) -> str | None:
        """The `$defs` name a schema only points at (`$ref`, or `allOf` of one `$ref`)."""
        if "$ref" in schema:
            return ref_name(schema["$ref"])
        parts = schema.get("allOf", [])
        if len(parts) == 1 and set(schema) - ANNOTATION_KEYS == {"allOf"}:
            return self._pure_ref(parts[0])
        return None

    def expr(self, schema: Schema) -> Expr:
        """The type of a property (or of a non-object definition)."""
        if "$ref" in schema:
            target = ref_name(schema["$ref"])
            self._define(target)
            return Name(target)
        if "not" in schema or "unevaluatedProperties" in schema:
            raise SchemaError(f"unsupported here: {json.dumps(schema)[:200]}")
        for key in ("allOf", "anyOf", "oneOf"):
            if key in schema:
                if key == "allOf" and len(schema[key]) != 1:
                    raise SchemaError(f"allOf of several: {json.dumps(schema)[:200]}")
                return union(self.expr(sub) for sub in schema[key])
        if "const" in schema:
            return Lit((schema["const"],))
        if "enum" in schema:
            return Lit(tuple(schema["enum"]))
        kinds = schema.get("type")
        if kinds is None:
            return JSON_VALUE
        return union(self._expr_of_kind(kind, schema) for kind in as_list(kinds))

    def _expr_of_kind(self, kind: str, schema: Schema) -> Expr:
        if kind in SCALARS:
            return Name(SCALARS[kind])
        if kind == "array":
            return ListOf(self.expr(schema["items"]) if "items" in schema else JSON_VALUE)
        if kind == "object":
            if "properties" in schema:
                raise SchemaError(f"an inline object: {json.dumps(schema)[:200]}")
            extra = schema.get("additionalProperties", True)
            return JSON_OBJECT if extra is True else DictOf(self.expr(extra))
        raise SchemaError(f"unknown type {kind!r}")

    # -- methods

    def _methods(self) -> list[Method]:
        """Every method, from the envelopes: who handles it, its params and result types."""
        by_name = {n: d for n, d in self.defs.items() if "x-method" in d}
        methods: list[Method] = []
        seen: set[str] = set()
        for side, requests, responses, notifications in ENVELOPES:
            if requests not in self.defs:
                continue
            results = {
                by_name[n]["x-method"]: n
                for n in refs_in(self.defs[responses]) & set(by_name)
                if by_name[n]["x-side"] == side
            }
            for params in sorted_like(refs_in(self.defs[requests]) & set(by_name), self.defs):
                method = by_name[params]["x-method"]
                if by_name[params]["x-side"] != side or method not in results:
                    raise SchemaError(f"{params}: not a {side} request with a result")
                methods.append(Method(method, side, params, results[method]))
                seen |= {params, results[method]}
            for params in sorted_like(refs_in(self.defs[notifications]) & set(by_name), self.defs):
                methods.append(Method(by_name[params]["x-method"], side, params, None))
                seen.add(params)
        for params in sorted_like(set(by_name) - seen, self.defs):
            if by_name[params]["x-side"] != "protocol":
                raise SchemaError(f"{params}: in no envelope")
            methods.append(Method(by_name[params]["x-method"], "protocol", params, None))
        return methods


@dataclass(frozen=True)
class Method:
    name: str
    side: str
    """agent | client | proxy: who handles it; protocol: either side (`$/cancel_request`)."""
    params: str
    result: str | None
    """None: a notification."""

    def describe(self, role: str) -> str:
        """Where a params or result type travels, for its docstring."""
        if self.result is None:
            to = "either side" if self.side == "protocol" else f"the {self.side}"
            return f"`{self.name}` notification to {to}."
        if role == "params":
            return f"`{self.name}` request to the {self.side}."
        return f"`{self.name}` result from the {self.side}."


def ref_name(ref: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise SchemaError(f"unsupported $ref {ref}")
    return ref[len(prefix) :]


def as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def refs_in(schema: object) -> set[str]:
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():  # pyright: ignore[reportUnknownVariableType]
                if key == "$ref" and isinstance(value, str):
                    found.add(ref_name(value))
                else:
                    stack.append(value)  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(node, list):
            stack.extend(node)  # pyright: ignore[reportUnknownArgumentType]
    return found


def sorted_like(names: Iterable[str], order: Mapping[str, object]) -> list[str]:
    position = {name: index for index, name in enumerate(order)}
    return sorted(names, key=position.__getitem__)
