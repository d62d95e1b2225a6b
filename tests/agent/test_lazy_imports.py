"""The session machinery imports no more than it needs: an editor's first `session/new` waits for
these imports. Each check runs in a fresh interpreter (this process has imported everything)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_session_path_does_not_import_structlog() -> None:
    out = _run(
        "import sys, json\n"
        "import agent.session.agent_session, agent.settings.scopes, agent.local.backends\n"
        "import sessions\n"
        "print(json.dumps([m for m in ('structlog', 'rich') if m in sys.modules]))\n"
    )
    assert json.loads(out) == []


def test_tool_input_models_are_built_at_first_use() -> None:
    out = _run(
        "import sys, json\n"
        "import agent.session.agent_session\n"
        "from agent.tools.builtin import builtin_tools\n"
        "tools = builtin_tools()\n"
        "before = [t.name for t in tools if t.input_model.__pydantic_complete__]\n"
        "schema = tools[0].input_schema\n"
        "after = tools[0].input_model.__pydantic_complete__\n"
        "print(json.dumps({'built': before, 'pathspec': 'pathspec' in sys.modules,\n"
        "                  'schema': schema['type'], 'after': after}))\n"
    )
    assert json.loads(out) == {"built": [], "pathspec": False, "schema": "object", "after": True}


def test_a_session_is_created_before_any_tool_or_pydantic_loads(tmp_path: Path) -> None:
    # An editor's `session/new` waits for this path; the first turn loads the tools.
    out = _run(
        "import sys, json, anyio\n"
        "from pathlib import Path\n"
        "from agent.session import SessionOptions, create_session\n"
        "from providers.wire.scripted import ScriptedModel\n"
        "from sessions import SessionStore\n"
        "async def main():\n"
        f"    root = Path({str(tmp_path)!r})\n"
        "    session = await create_session(\n"
        "        store=SessionStore(root / 'sessions'), cwd=root,\n"
        "        options=SessionOptions(model_name='scripted/test'),\n"
        "        model_factory=lambda name: ScriptedModel(), data_dir=root / 'data')\n"
        "    names = list(session.tools)\n"
        "    loaded = [m for m in ('pydantic', 'agent.tools.bash', 'agent.tools.read',\n"
        "                          'agent.tools.task', 'jsonschema') if m in sys.modules]\n"
        "    await session.aclose()\n"
        "    known = {'bash': 'bash' in names, 'task': 'task' in names}\n"
        "    print(json.dumps({'loaded': loaded, **known}))\n"
        "anyio.run(main)\n"
    )
    assert json.loads(out) == {"loaded": [], "bash": True, "task": True}


def test_a_turn_loads_no_parser_or_language_client_until_used(tmp_path: Path) -> None:
    # `lsp` and `verify` configured, `repoMap` off: a turn without an edit or a code-index call
    # imports neither tree-sitter, the index's store nor lsprotocol.
    out = _run(
        "import sys, json, anyio\n"
        "from pathlib import Path\n"
        "from agent.settings.code import CodeConfig, VerifyRule\n"
        "from agent.session import SessionOptions, create_session\n"
        "from agent.settings.scopes import Settings\n"
        "from agent.settings.schema import LspServerSettings\n"
        "from providers.wire.scripted import ScriptedModel, ScriptedTurn\n"
        "from sessions import SessionStore\n"
        "async def main():\n"
        f"    root = Path({str(tmp_path)!r})\n"
        "    code = CodeConfig(verify=(VerifyRule(files='*.py', command='true'),),\n"
        "        lsp={'x': LspServerSettings(command='x', extensions=['.py'])})\n"
        "    session = await create_session(\n"
        "        store=SessionStore(root / 'sessions'), cwd=root,\n"
        "        options=SessionOptions(model_name='scripted/test'),\n"
        "        settings=Settings(code=code),\n"
        "        model_factory=lambda name: ScriptedModel([ScriptedTurn(text='hi')]),\n"
        "        data_dir=root / 'data')\n"
        "    async for _ in session.run_turn('hello'):\n"
        "        pass\n"
        "    tools = 'repo_map' in session.tools and 'bash_output' in session.tools\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith(('tree_sitter', 'lsprotocol',\n"
        "        'agent.codeindex.engine', 'agent.lsp', 'sqlite3')))\n"
        "    await session.aclose()\n"
        "    print(json.dumps({'loaded': loaded, 'tools': tools}))\n"
        "anyio.run(main)\n"
    )
    assert json.loads(out) == {"loaded": [], "tools": True}
