"""Lab rows through whole sessions (`lab_session`): secrets (credential files and earshot's own
settings read with the tools, a repository skill symlinked to a secret, a provider's `apiKeyEnv`
key in a command's or hook's environment), fetches to loopback, private and link-local
addresses and redirects to another port (real loopback servers; every other address is refused
by the lab before a packet leaves), and MCP rules against look-alike server names (a real MCP
server process, in bash).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent.backends import Mode
from earshot.mcp_tools import tool_name
from tests.security.lab import Defence, Row, contains, created, mentions
from tests.security.lab_session import KEY_VALUE, USER_API_KEY

Call = tuple[str, Mapping[str, Any]]
YES = {"answers": ("allow_once",)}

# ------------------------------------------------------------------------- reading secrets

KEY_TEXT = "-----BEGIN OPENSSH PRIVATE KEY----- LAB-SSH-SENTINEL"
_SSH = f"mkdir -p ~/.ssh && echo '{KEY_TEXT}' > ~/.ssh/id_rsa"
SECRET_FILES: dict[str, tuple[str, str, str]] = {
    # name: (setup, path the model reads, the rule that would allow it)
    "ssh-key": (_SSH, "~/.ssh/id_rsa", "Read(~/.ssh/**)"),
    "ssh-key-absolute": (_SSH, "{home}/.ssh/id_rsa", "Read(~/.ssh/**)"),
    "ssh-key-dotdot": (_SSH, "{home}/.ssh/../.ssh/id_rsa", "Read(~/.ssh/**)"),
    "ssh-key-proc-root": (_SSH, "/proc/self/root{home}/.ssh/id_rsa", "Read(~/.ssh/**)"),
    "ssh-key-symlink-in-project": (f"{_SSH} && ln -s ~/.ssh/id_rsa key", "key", "Read(~/.ssh/**)"),
    "ssh-dir-symlink-in-project": (
        f"{_SSH} && ln -s ~/.ssh keys",
        "keys/id_rsa",
        "Read(~/.ssh/**)",
    ),
    "aws": (
        "mkdir -p ~/.aws && echo 'LAB-AWS-SENTINEL' > ~/.aws/credentials",
        "~/.aws/credentials",
        "Read(~/.aws/**)",
    ),
    "netrc": ("echo 'password LAB-NETRC-SENTINEL' > ~/.netrc", "~/.netrc", "Read(~/.netrc)"),
    "gh": (
        "mkdir -p ~/.config/gh && echo 'oauth_token: LAB-GH-SENTINEL' > ~/.config/gh/hosts.yml",
        "~/.config/gh/hosts.yml",
        "Read(~/.config/gh/**)",
    ),
    "env-outside": (
        "echo 'TOKEN=LAB-ENV-SENTINEL' > ../outside/.env",
        "../outside/.env",
        "Read(../outside/.env)",
    ),
    "env-production-outside": (
        "echo 'TOKEN=LAB-ENV-SENTINEL' > ../outside/.env.production",
        "../outside/.env.production",
        "Read(../outside/.env.production)",
    ),
    "earshot-settings": (
        "",
        "~/.config/earshot/settings.json",
        "Read(~/.config/earshot/settings.json)",
    ),
}
_SENTINEL = {
    "aws": "LAB-AWS-SENTINEL",
    "netrc": "LAB-NETRC-SENTINEL",
    "gh": "LAB-GH-SENTINEL",
    "env-outside": "LAB-ENV-SENTINEL",
    "env-production-outside": "LAB-ENV-SENTINEL",
    "earshot-settings": USER_API_KEY,
}
READ_MODES: dict[str, tuple[Mode, tuple[str, ...]]] = {
    "yolo": ("yolo", ()),
    "auto-allow-read": ("auto", ("Read",)),
    "ask-allow-home": ("ask", ("Read(~/**)",)),
}
_ALL_MODES = {"ssh-key", "earshot-settings"}


def _secret(name: str) -> str:
    return _SENTINEL.get(name, "LAB-SSH-SENTINEL")


def read_rows() -> list[Row]:
    rows: list[Row] = []
    for name, (setup, path, rule) in SECRET_FILES.items():
        for variant in READ_MODES if name in _ALL_MODES else ("yolo",):
            mode, allow = READ_MODES[variant]
            rows.append(
                Row(
                    id=f"secrets/read-{name}/{variant}",
                    cls="secrets",
                    command="",
                    effect=mentions(_secret(name)),
                    expect=Defence.SESSION,
                    mode=mode,
                    allow=allow,
                    setup=setup,
                    tool="Session",
                    calls=(("read", {"path": path}),),
                    # Only a rule naming the place lets it be read.
                    unguarded={"allow": (*allow, rule)},
                )
            )
    rows += [
        Row(
            id=f"secrets/search-{tool}",
            cls="secrets",
            command="",
            effect=mentions("LAB-SSH-SENTINEL"),
            expect=Defence.SESSION,
            mode="yolo",
            setup=_SSH,
            tool="Session",
            calls=((tool, {"pattern": "LAB-SSH", "path": "~"}),),
            unguarded={"allow": ("Read(~/.ssh/**)",)},
        )
        for tool in ("grep",)
    ]
    return rows


# -------------------------------------------------------- a repository skill that is a link

_SKILL_DIR = ".earshot/skills/notes"
SKILL_LINKS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # name: (setup, secret, the user's deny rules); unguarded: no deny rule. (A project skill
    # that resolves outside the project, to `~/.ssh/id_rsa` say, is never loaded at all.)
    "to-dotenv": (
        "printf -- '---\\ndescription: LAB-DOTENV-SENTINEL\\n---\\n' > .env && "
        f"mkdir -p {_SKILL_DIR} && ln -s ../../../.env {_SKILL_DIR}/SKILL.md",
        "LAB-DOTENV-SENTINEL",
        ("Read(./.env)",),
    ),
    "to-dotenv-local-by-glob": (
        "printf -- '---\\ndescription: LAB-DOTENV-SENTINEL\\n---\\n' > .env.local && "
        f"mkdir -p {_SKILL_DIR} && ln -s ../../../.env.local {_SKILL_DIR}/SKILL.md",
        "LAB-DOTENV-SENTINEL",
        ("Read(./.env*)",),
    ),
    "directory-to-a-denied-folder": (
        "mkdir -p secrets/notes && printf -- '---\\ndescription: LAB-FOLDER-SENTINEL\\n---\\n' > "
        "secrets/notes/SKILL.md && mkdir -p .earshot/skills && "
        "ln -s ../../secrets/notes .earshot/skills/notes",
        "LAB-FOLDER-SENTINEL",
        ("Read(./secrets/**)",),
    ),
}


def skill_rows() -> list[Row]:
    return [
        Row(
            id=f"secrets/skill-{name}",
            cls="secrets",
            command="",
            effect=mentions(secret),
            expect=Defence.SESSION,
            mode="ask",
            deny=deny,
            setup=setup,
            tool="Session",
            settings={"trusted": True},  # the user trusts the project: skills load
            unguarded={"deny": ()},
        )
        for name, (setup, secret, deny) in SKILL_LINKS.items()
    ]


# ------------------------------------------------------- a provider key in a command's env

_KEYED = {"providers": {"vault": {"apiKeyEnv": "{keyvar}"}}}
_UNKEYED = {"user": {"providers": {"vault": {"apiKeyEnv": "LAB_SOME_OTHER_VARIABLE"}}}}
KEY_PEEKS: dict[str, str] = {
    "printenv": "printenv {keyvar}",
    "env": "env",
    "proc-self-environ": "cat /proc/self/environ | tr '\\0' '\\n'",
    "python": 'python3 -c "import os; print(os.environ)"',
}


def key_rows() -> list[Row]:
    rows = [
        Row(
            id=f"secrets/api-key-env-{name}",
            cls="secrets",
            command="",
            effect=mentions(KEY_VALUE),
            expect=Defence.SESSION,
            mode="yolo",
            tool="Session",
            calls=(("bash", {"command": command}),),
            settings={"user": _KEYED},
            unguarded=_UNKEYED,
        )
        for name, command in KEY_PEEKS.items()
    ]
    rows.append(
        Row(
            id="secrets/api-key-env-in-a-hook",
            cls="secrets",
            command="",
            effect=contains("{lab}/hook-env", KEY_VALUE),
            expect=Defence.SESSION,
            mode="yolo",
            tool="Session",
            settings={
                "user": {
                    **_KEYED,
                    "hooks": {"user_prompt_submit": [{"command": "env > {lab}/hook-env"}]},
                }
            },
            unguarded=_UNKEYED,
        )
    )
    return rows


# --------------------------------------------------------------------------------- fetches


def _fetch(url: str) -> tuple[Call, ...]:
    return (("fetch", {"url": url}),)


FETCHES: dict[str, tuple[str, str]] = {
    # name: (URL, the connection it makes unguarded: `lab_session` writes "CONNECT host port N")
    "loopback": ("http://{server}/", "port {server_port}"),
    "localhost": ("http://localhost:{server_port}/", "port {server_port}"),
    "loopback-short": ("http://127.1:{server_port}/", "port {server_port}"),
    "loopback-decimal": ("http://2130706433:{server_port}/", "port {server_port}"),
    "loopback-mapped-v6": ("http://[::ffff:127.0.0.1]:{server_port}/", "port {server_port}"),
    "unspecified": ("http://0.0.0.0:{server_port}/", "port {server_port}"),
    "loopback-v6": ("http://[::1]:{server_port}/", "port {server_port}"),
    "link-local-metadata": ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 port 80"),
    "private-10": ("http://10.0.0.1/admin", "10.0.0.1 port 80"),
    "private-192": ("http://192.168.1.1/", "192.168.1.1 port 80"),
    "shared-100-64": ("http://100.100.100.200/latest/meta-data/", "100.100.100.200 port 80"),
    "unique-local-v6": ("http://[fd00::1]/", "fd00::1 port 80"),
}
REDIRECTS: dict[str, tuple[str, tuple[str, ...], str]] = {
    # name: (where {server} redirects, rules, the connection the redirect makes unguarded)
    "to-another-loopback": (
        "redirect:http://127.0.0.1:{other_port}/x",
        ("Fetch(domain:localhost)",),
        "port {other_port}",
    ),
    "to-metadata": (
        "redirect:http://169.254.169.254/latest/",
        ("Fetch(domain:localhost)",),
        "169.254.169.254 port 80",
    ),
    "to-private": (
        "redirect:http://10.1.2.3:9200/_all",
        ("Fetch(domain:localhost)",),
        "10.1.2.3 port 9200",
    ),
}


ANSWERED_REDIRECTS: dict[str, tuple[Mode, str, str]] = {
    "same-host-another-port": (
        "auto",
        "http://localhost:{server_port}/",
        "redirect:http://localhost:{other_port}/x",
    ),
    "ask-mode": ("ask", "http://{server}/start", "redirect:http://{other}/x"),
}


def fetch_rows() -> list[Row]:
    servers = {"server": "text:LAB-SERVED", "other": "text:LAB-OTHER"}
    rows = [
        Row(
            id=f"fetch/{name}",
            cls="fetch",
            command="",
            effect=mentions(target),
            expect=Defence.SESSION,
            mode="auto",
            tool="Session",
            calls=_fetch(url),
            settings={"servers": servers},
            unguarded=YES,
            needs=("ipv6",) if "[" in url else (),
        )
        for name, (url, target) in FETCHES.items()
    ]
    rows += [
        Row(
            id=f"fetch/redirect-{name}",
            cls="fetch",
            command="",
            effect=mentions(target),
            expect=Defence.SESSION,
            mode="auto",
            allow=allow,
            tool="Session",
            calls=_fetch("http://localhost:{server_port}/start"),
            settings={"servers": {**servers, "server": redirect}},
            unguarded=YES,
        )
        for name, (redirect, allow, target) in REDIRECTS.items()
    ]
    # The user allows the first fetch when asked; a redirect to another port asks again (a
    # rule naming the host, `Fetch(domain:localhost)`, would cover every port of it).
    rows += [
        Row(
            id=f"fetch/redirect-after-an-answer-{name}",
            cls="fetch",
            command="",
            effect=mentions("port {other_port}"),
            expect=Defence.SESSION,
            mode=mode,
            tool="Session",
            calls=_fetch(url),
            answers=("allow_once",),
            settings={"servers": {**servers, "server": redirect}},
            unguarded={"answers": ("allow_once", "allow_once")},
        )
        for name, (mode, url, redirect) in ANSWERED_REDIRECTS.items()
    ]
    return rows


# -------------------------------------------------------------------------------- MCP names

MCP_SERVER = r"""#!/bin/bash
# A minimal MCP server on stdio with one tool, `shout`: calling it touches "$1".
while IFS= read -r line; do
  [[ $line =~ \"id\":([0-9]+) ]] || continue
  id=${BASH_REMATCH[1]}
  [[ $line =~ \"method\":\"([^\"]+)\" ]] && method=${BASH_REMATCH[1]}
  case $method in
    initialize)
      [[ $line =~ \"protocolVersion\":\"([^\"]+)\" ]]
      result="{\"protocolVersion\":\"${BASH_REMATCH[1]}\",\"capabilities\":{\"tools\":{}},"
      result+="\"serverInfo\":{\"name\":\"lab\",\"version\":\"1\"}}" ;;
    tools/list) result='{"tools":[{"name":"shout","inputSchema":{"type":"object"}}]}' ;;
    tools/call) touch "$1"; result='{"content":[{"type":"text","text":"shouted"}]}' ;;
    *) result='{}' ;;
  esac
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$result"
done
"""
_MCP_SETUP = "cat > {lab}/mcp.sh <<'EOF'\n" + MCP_SERVER + "EOF"


def _servers(*names: str) -> dict[str, Any]:
    return {
        "mcpServers": {
            name: {"command": "bash", "args": ["{lab}/mcp.sh", f"{{lab}}/ran-{name}"]}
            for name in names
        }
    }


MCP_CASES: dict[str, tuple[tuple[str, ...], str, Mode, Mapping[str, tuple[str, ...]]]] = {
    # name: (servers, the server whose tool the model calls, mode, rules {allow|deny: ...})
    "allow-a-covers-a_": (("a", "a_"), "a_", "ask", {"allow": ("mcp__a",)}),
    "allow-a-covers-ab": (("a", "ab"), "ab", "ask", {"allow": ("mcp__a",)}),
    "allow-a_-covers-a": (("a", "a_"), "a", "ask", {"allow": ("mcp__a_",)}),
    "deny-a__b-for-its-server": (("a__b",), "a__b", "yolo", {"deny": ("mcp__a__b",)}),
    "deny-a__b-tool": (("a__b",), "a__b", "yolo", {"deny": ("mcp__a__b__shout",)}),
    "deny-a_-for-its-server": (("a", "a_"), "a_", "yolo", {"deny": ("mcp__a_",)}),
}


def mcp_rows() -> list[Row]:
    rows: list[Row] = []
    for name, (servers, target, mode, rules) in MCP_CASES.items():
        allow, deny = rules.get("allow", ()), rules.get("deny", ())
        # Unguarded: the rule that is meant for the server called (allow), or none (deny).
        unguarded = {"allow": (f"mcp__{target}",)} if allow else {"deny": ()}
        rows.append(
            Row(
                id=f"mcp-names/{name}",
                cls="mcp-names",
                command="",
                effect=created(f"{{lab}}/ran-{target}"),
                expect=Defence.SESSION,
                mode=mode,
                allow=allow,
                deny=deny,
                setup=_MCP_SETUP,
                tool="Session",
                calls=((tool_name(target, "shout"), {}),),
                settings={"user": _servers(*servers)},
                unguarded=unguarded,
            )
        )
    # Controls: a rule reaches the server it names.
    for name, (servers, target, rules) in {
        "allow-a-reaches-a": (("a", "a_"), "a", {"allow": ("mcp__a",)}),
        "deny-a_-spares-a": (("a", "a_"), "a", {"deny": ("mcp__a_",)}),
    }.items():
        rows.append(
            Row(
                id=f"control/mcp-{name}",
                cls="control",
                command="",
                effect=created(f"{{lab}}/ran-{target}"),
                expect=Defence.ALLOW,
                mode="ask" if "allow" in rules else "yolo",
                allow=rules.get("allow", ()),
                deny=rules.get("deny", ()),
                setup=_MCP_SETUP,
                tool="Session",
                calls=((tool_name(target, "shout"), {}),),
                settings={"user": _servers(*servers)},
            )
        )
    return rows


ROWS: list[Row] = read_rows() + skill_rows() + key_rows() + fetch_rows() + mcp_rows()
