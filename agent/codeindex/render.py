"""The repository map as text, and fitting it to a token budget.

    agent/context/tokens.py:
       56│def text_tokens(text: str) -> int:
      128│class TokenCounter:
      145│    def message(self, message: Message) -> int:

Files in rank order (the best definition's file first), each file's definitions in line order,
each shown by its source line as written, so indentation shows nesting and the number lets the
model read exactly there. The budget is met by a binary search over how many of the ranked
definitions to show (`fit_to_budget`), measured with the agent's own estimator
(`agent.context.tokens.text_tokens`), so the map costs what the context accounting will think it
costs.

Names and lines come from the repository and go to the model: control characters are replaced,
so a file name cannot carry a terminal escape or a fake message boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from agent.codeindex.languages import Definition
from agent.context import text_tokens


def clean(text: str) -> str:
    """`text` without control characters (tabs become spaces)."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else " " if char == "\t" else "?" for char in text)


def render_map(
    selected: Sequence[tuple[str, str]], definitions: Mapping[str, Sequence[Definition]]
) -> str:
    """The map of the `(path, name)` pairs in `selected`; every definition of a selected name in
    its file is shown (overloads, redefinitions)."""
    wanted: dict[str, set[str]] = {}
    for path, name in selected:
        wanted.setdefault(path, set()).add(name)
    blocks: list[str] = []
    for path, names in wanted.items():
        shown = [d for d in definitions.get(path, ()) if d.name in names]
        if not shown:
            continue
        width = len(str(shown[-1].line))
        lines = [f"{clean(path)}:"]
        lines.extend(f"  {d.line:>{width}}│{clean(d.text)}" for d in shown)
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def fit_to_budget(count: int, render: Callable[[int], str], budget: int) -> tuple[str, int]:
    """The longest `render(n)` (n <= count) within `budget` tokens, and that n."""
    best, best_n = "", 0
    low, high = 1, count
    while low <= high:
        middle = (low + high) // 2
        text = render(middle)
        if text_tokens(text) <= budget:
            best, best_n = text, middle
            low = middle + 1
        else:
            high = middle - 1
    return best, best_n
