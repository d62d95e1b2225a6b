"""A generated source tree for the code index benchmark: deterministic, shaped like a real one.

`generate(root, files)` writes `files` modules (70% Python, 20% TypeScript, 10% Go) of about
100 lines each, in directories of 100. Each module defines a class with methods, functions and a
constant, with compound names unique to it, plus the common names real code is full of (`run`,
`close`, `__init__`). Each module uses names from 5 to 10 others, drawn with a Zipf-like skew
towards a core of low-numbered modules, so the reference graph has hubs as real ones do.
"""

from __future__ import annotations

import random
from pathlib import Path

_WORDS = (
    "token", "session", "buffer", "parser", "render", "config", "request", "stream", "cache",
    "index", "record", "schema", "filter", "widget", "socket", "ledger", "course", "signal",
    "vector", "matrix", "branch", "commit", "policy", "sample", "window", "frame", "queue",
)  # fmt: skip


def _names(module: int) -> dict[str, str]:
    rng = random.Random(module)
    word = rng.choice(_WORDS)
    other = rng.choice(_WORDS)
    return {
        "cls": f"{word.capitalize()}{other.capitalize()}{module}",
        "fn": f"compute_{word}_{module}",
        "fn2": f"load_{other}_{module}",
        "const": f"MAX_{word.upper()}_{module}",
        "method": f"apply_{other}_{module}",
    }


def _python(module: int, uses: list[int], rng: random.Random) -> str:
    names = _names(module)
    lines = [f'"""Module {module}: {names["cls"]} and helpers."""', ""]
    for used in uses:
        other = _names(used)
        lines.append(f"from pkg{used // 100}.mod{used % 100} import {other['fn']}, {other['cls']}")
    lines += ["", f"{names['const']} = {rng.randrange(1000)}", "", ""]
    lines += [f"class {names['cls']}:", f'    """A {names["cls"]}."""', ""]
    lines += ["    def __init__(self, size: int) -> None:", "        self.size = size", ""]
    for method in (names["method"], "run", "close"):
        lines.append(f"    def {method}(self, value: int) -> int:")
        for used in rng.sample(uses, min(3, len(uses))):
            lines.append(f"        value += {_names(used)['fn']}(value)")
        lines += ["        # keep the running total in range", "        return value % 97", ""]
    for function in (names["fn"], names["fn2"]):
        lines += ["", f"def {function}(count: int) -> int:", f'    """{function} of count."""']
        for used in rng.sample(uses, min(4, len(uses))):
            other = _names(used)
            lines.append(f"    item = {other['cls']}(count)")
            lines.append(f"    count = item.run({other['fn']}(count))")
        lines += ["    total = 0", "    for step in range(count % 7):", "        total += step"]
        lines += ["    return total + count", ""]
    return "\n".join(lines) + "\n"


def _typescript(module: int, uses: list[int], rng: random.Random) -> str:
    names = _names(module)
    lines = [f"// Module {module}"]
    for used in uses:
        other = _names(used)
        source = f"../pkg{used // 100}/mod{used % 100}"
        lines.append(f"import {{ {other['fn']}, {other['cls']} }} from '{source}';")
    lines += ["", f"export const {names['const']} = {rng.randrange(1000)};", ""]
    lines += [f"export class {names['cls']} {{", "  constructor(private size: number) {}", ""]
    for method in (names["method"], "run", "close"):
        lines.append(f"  {method}(value: number): number {{")
        for used in rng.sample(uses, min(3, len(uses))):
            lines.append(f"    value += {_names(used)['fn']}(value);")
        lines += ["    return value % 97;", "  }", ""]
    lines.append("}")
    for function in (names["fn"], names["fn2"]):
        lines += ["", f"export function {function}(count: number): number {{"]
        for used in rng.sample(uses, min(4, len(uses))):
            other = _names(used)
            lines.append(f"  count = new {other['cls']}(count).run({other['fn']}(count));")
        lines += ["  let total = 0;", "  for (let step = 0; step < count % 7; step++) {"]
        lines += ["    total += step;", "  }", "  return total + count;", "}"]
    return "\n".join(lines) + "\n"


def _go(module: int, uses: list[int], rng: random.Random) -> str:
    names = _names(module)
    lines = [f"package mod{module % 100}", "", f"const {names['const']} = {rng.randrange(1000)}"]
    lines += ["", f"type {names['cls']} struct {{", "\tsize int", "}", ""]
    for method in (names["method"], "Run", "Close"):
        lines.append(f"func (item *{names['cls']}) {method}(value int) int {{")
        for used in rng.sample(uses, min(3, len(uses))):
            lines.append(f"\tvalue += {_names(used)['fn']}(value)")
        lines += ["\treturn value % 97", "}", ""]
    for function in (names["fn"], names["fn2"]):
        lines.append(f"func {function}(count int) int {{")
        for used in rng.sample(uses, min(4, len(uses))):
            lines.append(f"\tcount = {_names(used)['fn']}(count)")
        lines += ["\ttotal := 0", "\tfor step := 0; step < count%7; step++ {", "\t\ttotal += step"]
        lines += ["\t}", "\treturn total + count", "}", ""]
    return "\n".join(lines) + "\n"


def generate(root: Path, files: int, *, seed: int = 7) -> list[Path]:
    """Write the tree under `root`; returns the files written."""
    rng = random.Random(seed)
    written: list[Path] = []
    for module in range(files):
        # Zipf-like: most uses go to a core of low-numbered modules.
        count = rng.randint(5, 10)
        uses = sorted(
            {
                min(int(rng.paretovariate(1.2)) * rng.randint(1, 9) - 1, files - 1)
                for _ in range(count)
            }
            - {module}
        ) or [0 if module else 1]
        kind = module % 10
        if kind < 7:
            suffix, text = ".py", _python(module, uses, rng)
        elif kind < 9:
            suffix, text = ".ts", _typescript(module, uses, rng)
        else:
            suffix, text = ".go", _go(module, uses, rng)
        path = root / f"pkg{module // 100}" / f"mod{module % 100}{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
