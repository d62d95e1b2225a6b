"""Text that every layer can encode: lone surrogates replaced by U+FFFD.

A Python `str` may hold a lone surrogate (U+D800 to U+DFFF unpaired): JSON's `"\\ud800"` escape
decodes to one, and so does undecodable input read with `surrogateescape`. No UTF-8 encoder takes
it: a provider SDK serialising a request raises `UnicodeEncodeError`, and so does a strict JSON
peer. Stored in a transcript, one such character would fail every later model call of the
session. So text is made valid where it enters: the unified types clean their text when they are
built (`providers.types`), and the ACP transport cleans what it decodes and what it writes.

Standard library only and cheap to import: the ACP start-up path uses it before anything else
loads.
"""

from __future__ import annotations

from typing import Any, cast

REPLACEMENT = "\ufffd"


def has_surrogates(text: str) -> bool:
    """Whether `text` holds a surrogate code point (it cannot be encoded as UTF-8)."""
    if text.isascii():
        return False
    try:
        # Faster than searching for one (about 3x on Latin text, 1.5x on CJK), in C.
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def valid_text(text: str) -> str:
    """`text` itself when it encodes as UTF-8 (nearly always: one `isascii`, else one trial
    encoding); otherwise a copy where a surrogate pair split in two (two deltas of one emoji) is
    joined again and every lone surrogate is U+FFFD."""
    if not has_surrogates(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def valid_json(value: Any) -> Any:
    """A JSON value (as `json.loads` returns it) with every string, keys included, made valid
    by `valid_text`. Returns `value` itself when nothing needed fixing. Iterative, so a value
    nested as deeply as the JSON decoder allows cannot exhaust the stack; lists and dicts that
    need fixing are rebuilt, never mutated (the caller may still hold them)."""
    node: object = value
    if isinstance(node, str):
        return valid_text(node)
    if not _is_container(node) or not _holds_surrogates(node):
        return value
    return _rebuilt(node)


def _is_container(node: object) -> bool:
    # A plain bool: `isinstance` would narrow `object` to `list[Unknown]`, which strict typing
    # rejects everywhere the value goes next.
    return isinstance(node, list | dict)


def _is_list(node: object) -> bool:
    return isinstance(node, list)


def _children(node: object) -> list[object]:
    """The values inside a list or dict (keys excluded), else none."""
    if isinstance(node, list):
        return list(cast("list[object]", node))
    if isinstance(node, dict):
        return list(cast("dict[object, object]", node).values())
    return []


def _holds_surrogates(value: object) -> bool:
    stack: list[object] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if has_surrogates(node):
                return True
        elif _is_container(node):
            if not _is_list(node):
                stack.extend(cast("dict[object, object]", node).keys())
            stack.extend(_children(node))
    return False


def _rebuilt(value: object) -> object:
    """A copy of `value` with valid strings. Containers are built bottom-up: each is visited
    twice on an explicit stack, first to push its children, then to assemble it from their
    copies (kept by the identity of the original; all of them live as long as `value`)."""
    copies: dict[int, object] = {}
    stack: list[tuple[object, bool]] = [(value, False)]
    while stack:
        node, children_done = stack.pop()
        if isinstance(node, str):
            copies[id(node)] = valid_text(node)
        elif not _is_container(node):
            copies[id(node)] = node
        elif not children_done:
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
        elif _is_list(node):
            copies[id(node)] = [copies[id(child)] for child in _children(node)]
        else:
            mapping = cast("dict[object, object]", node)
            copies[id(node)] = {
                valid_text(key) if isinstance(key, str) else key: copies[id(child)]
                for key, child in mapping.items()
            }
    return copies[id(value)]
