"""bashlex from the shipped parse tables (`agent.shell.grammar`): the same tables bashlex builds,
the same trees for every command, and bashlex's own build when the tables are not its own."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent.shell import grammar

COMMANDS = [
    "ls -la",
    "cd src && echo x > y.txt",
    "cat a | grep -v b | sort -u > out 2>&1",
    'for f in *.py; do ruff check "$f" || exit 1; done',
    "if [ -f x ]; then echo yes; else echo no; fi",
    "echo $(git rev-parse HEAD) `date` ${HOME:-/root}",
    "(cd a; make) && { echo done; }",
    'while read line; do echo "$line"; done < input.txt',
    "FOO=bar npm run test -- --watch=false &",
    "diff <(sort a) <(sort b)",
    "cat <<EOF > f\nhello $USER\nEOF\n",
    "a; b\nc || d",
    "function f() { echo hi; }; f",
]

DUMP = """
import json, sys
{load}
trees = []
for command in json.loads(sys.argv[1]):
    trees.append([node.dump() for node in bashlex.parse(command)])
production = type(bashlex.parser.yaccparser.productions[0]).__name__
print(json.dumps({{"trees": trees, "production": production}}))
"""


def _dump(load: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", DUMP.format(load=load), json.dumps(COMMANDS)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_shipped_tables_are_the_ones_bashlex_builds() -> None:
    # Fails when bashlex is upgraded without `python -m agent.shell.grammar`.
    assert grammar.TABLES.read_text(encoding="utf-8") == grammar.render(grammar.built_tables())


def test_commands_parse_to_the_same_trees_as_with_bashlexs_own_tables() -> None:
    shipped = _dump("from agent.shell.grammar import load_bashlex; bashlex = load_bashlex()")
    own = _dump("import bashlex")
    assert shipped["production"] == "_Production"  # the shipped tables were used
    assert own["production"] == "Production"  # ... and here bashlex built its own
    assert shipped["trees"] == own["trees"]


def test_tables_for_other_bashlex_sources_are_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = json.loads(grammar.TABLES.read_text(encoding="utf-8"))
    spec = importlib.util.find_spec("bashlex")
    assert grammar._shipped_tables(spec) is not None  # pyright: ignore[reportPrivateUsage]
    data["source_digest"] = "0" * 64
    other = tmp_path / "grammar_tables.json"
    other.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(grammar, "TABLES", other)
    assert grammar._shipped_tables(spec) is None  # pyright: ignore[reportPrivateUsage]
