"""Lab rows: deny and ask rules escaped by syntax.

Each table is generated from small lists (spellings of a program name, ways to run a command
string, wrappers...) so a new trick is one more entry, and every combination runs for real."""

from __future__ import annotations

import base64
import shlex

from tests.security.lab import (
    Defence,
    Row,
    created,
    deleted,
)

q = shlex.quote


# ----------------------------------------------------------------- deny rules escaped by syntax

SPELLINGS = {
    "plain": "rm",
    "ansi-c": "$'rm'",
    "ansi-c-half": "r$'m'",
    "locale": '$"rm"',
    "hex": r"$'\x72\x6d'",
    "hex-upper": r"$'\x72\x6D'",
    "hex-half": r"$'\x72'm",
    "octal": r"$'\162\155'",
    "unicode": r"$'\u0072\u006d'",
    "unicode-long": r"$'\U00000072m'",
    "nul-truncated": r"$'rm\0junk'",
    "empty-ansi": "r$''m",
    "absolute": "/bin/rm",
    "quoted": "'r'm",
    "backslash": r"\rm",
    "backslash-middle": r"r\m",
    "mixed-quotes": "\"r\"'m'",
    "absolute-ansi": r"$'/bin/\x72m'",
}
"""Ways to write `rm`."""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


CARRIERS = {
    "plain": "{cmd}",
    "bash-c": "bash -c {q}",
    "bash-lc": "bash -lc {q}",
    "bash-x-c": "bash -x -c {q}",
    "bash-c-dashdash": "bash -c -- {q}",
    "bash-stdin-herestring": "bash /dev/stdin <<< {q}",
    "eval": "eval {q}",
    "base64-pipe-bash": "echo {b64} | base64 -d | bash",
}
"""Ways to run a command string `{cmd}` (`{q}`: quoted, `{b64}`: base64)."""

MORE_CARRIERS = {
    "bash-norc-c": "bash --norc -c {q}",
    "bash-eu-pipefail-c": "bash -eu -o pipefail -c {q}",
    "sh-errexit-c": "sh -o errexit -c {q}",
    "bash-s-herestring": "bash -s <<< {q}",
    "bash-herestring": "bash <<< {q}",
    "printf-pipe-bash": "printf '%s\\n' {q} | bash",
    "base64-pipe-sh": "echo {b64} | base64 -d | sh",
    "trap-exit": "trap {q} EXIT; true",
    "alias": "shopt -s expand_aliases\nalias zz={q}\nzz",
    "source-stdin": "source /dev/stdin <<< {q}",
    "dot-process-substitution": ". <(printf '%s' {q})",
    "script-qc": "script -qc {q} /dev/null",
    "python-os-system": "python3 -c {py}",
    "perl-system": "perl -e {pl}",
    "node-execsync": "node -e {js}",
    "nested-shells": "bash -c {qq}",
    "eval-eval": "eval {qe}",
    "flock-c": "flock .lock -c {q}",
    "mapfile-callback": "mapfile -C {qcomment} -c 1 <<< x",
    "exec-stdin": "exec <<< {q}; bash",
    "written-script": "printf '%s' {q} > s.sh && bash s.sh",
    "written-script-sourced": "printf '%s' {q} > s.sh; . ./s.sh",
    "bash-env-written": "printf '%s' {q} > env.sh; BASH_ENV=./env.sh bash -c true",
    "ps4": "PS4={qps4}; set -x; true",
    "xargs-sh-c": "echo x | xargs sh -c {q}",
    "find-exec-sh": "find . -maxdepth 0 -exec sh -c {q} \\;",
    "sudo-bash-c": "sudo bash -c {q}",
    "timeout-bash-c": "timeout 5 bash -c {q}",
    "function": "f() {{ {cmd}; }}; f",
    "subshell": "( {cmd} )",
    "substitution": "echo $({cmd})",
    "backticks": "echo `{cmd}`",
    "process-substitution": "cat <({cmd})",
    "or-list": "false || {cmd}",
    "for-loop": "for i in 1; do {cmd}; done",
    "awk-system": "awk {awk} /dev/null",
    "sed-e-command": "sed -n {sed} a",
    "git-alias": "git -c alias.zz={qbang} zz",
    "tar-to-command": "tar -cf x.tar a && tar -xf x.tar --to-command={q}",
    "printf-v-subscript": "printf -v {qsub} %s 1",
    "test-v-subscript": "test -v {qsub}",
    "bracket-v-subscript": "[ -v {qsub} ]",
    "read-subscript": "read {qsub} <<< x",
}
"""More ways to run it, tried with the plain spelling."""

WRAPPERS = {
    "timeout": "timeout 5 {cmd}",
    "nice": "nice -n 5 {cmd}",
    "nice-dashdash": "nice -- {cmd}",
    "nohup": "nohup {cmd} > /dev/null 2>&1",
    "command": "command {cmd}",
    "command-p": "command -p {cmd}",
    "env-assignment": "env X=1 {cmd}",
    "env-i": "env -i {abs}",
    "env-split-string": "env -S {q}",
    "env-split-attached": "env {qS}",
    "env-split-long": "env --split-string={q}",
    "stdbuf": "stdbuf -oL {cmd}",
    "ionice": "ionice -c3 {cmd}",
    "setsid": "setsid -w {cmd}",
    "exec-in-subshell": "(exec {cmd})",
    "time-keyword": "time {cmd}",
    "flock": "flock .lock {cmd}",
    "sudo": "sudo -u root {cmd}",
    "sudo-s": "sudo -s {cmd}",
    "xargs": "echo victim | xargs {prog} -f",
    "xargs-replace": "echo victim | xargs -I{{}} {prog} -f {{}}",
    "find-exec": "find . -name victim -exec {prog} -f {{}} +",
    "hash-p": "hash -p /bin/{prog} zz; zz -f victim",
    "assigned-name": "X={prog}; $X -f victim",
    "default-name": "${{X:-{prog}}} -f victim",
    "substituted-name": '"$(echo {prog})" -f victim',
    "brace-name": "{{{prog},-f,victim}}",
}
"""Programs that run their arguments, and computed program names, with the plain spelling."""

_RM = "rm -f victim"


def _fill(template: str, cmd: str, prog: str = "rm") -> str:
    python = f"import os; os.system({cmd!r})"
    return template.format(
        cmd=cmd,
        prog=prog,
        abs=f"/bin/{cmd}",
        q=q(cmd),
        qq=q(f"sh -c {q(cmd)}"),
        qe=q(f"eval {q(cmd)}"),
        qS=q(f"-S{cmd}"),
        qbang=q(f"!{cmd}"),
        qcomment=q(f"{cmd} #"),
        qps4=q(f"$({cmd})"),
        qsub=q(f"a[$({cmd})]"),
        b64=_b64(cmd),
        py=q(python),
        pl=q(f"system(q{{{cmd}}})"),
        js=q(f"require('child_process').execSync({cmd!r})"),
        awk=q(f'BEGIN{{system("{cmd}")}}'),
        sed=q(f"1e {cmd}"),
    )


_NEEDS = {
    "script-qc": ("script",),
    "perl-system": ("perl",),
    "node-execsync": ("node",),
    "python-os-system": ("python3",),
    "flock-c": ("flock",),
    "flock": ("flock",),
    "ionice": ("ionice",),
    "setsid": ("setsid",),
}


def _deny_rm(name: str, command: str, *, fixture: str = "plain") -> Row:
    return Row(
        id=f"deny-rm/{name}",
        cls="deny-escape",
        command=command,
        effect=deleted("{project}/victim"),
        expect=Defence.DENY,
        mode="yolo",
        deny=("Bash(rm *)",),
        fixture=fixture,
        needs=_NEEDS.get(name.split("/")[-1], ()),
    )


def deny_rm_rows() -> list[Row]:
    rows = [
        _deny_rm(f"{spelling}/{carrier}", _fill(template, f"{written} -f victim"))
        for spelling, written in SPELLINGS.items()
        for carrier, template in CARRIERS.items()
    ]
    rows += [
        _deny_rm(
            f"plain/{carrier}", _fill(template, _RM), fixture="git" if "git" in carrier else "plain"
        )
        for carrier, template in MORE_CARRIERS.items()
    ]
    rows += [_deny_rm(f"plain/{name}", _fill(template, _RM)) for name, template in WRAPPERS.items()]
    rows += [
        _deny_rm(
            "python-subprocess-list",
            "python3 -c \"import subprocess; subprocess.run(['rm', '-f', 'victim'])\"",
        ),
        _deny_rm("hex/timeout", r"timeout 5 $'\x72\x6d' -f victim"),
        _deny_rm("hex/sudo", r"sudo $'\x72\x6d' -f victim"),
        _deny_rm("hex/xargs", r"echo victim | xargs $'\x72\x6d' -f"),
        _deny_rm("find-execdir-sh", "find . -name victim -execdir sh -c 'rm -f \"$1\"' _ {} \\;"),
    ]
    return rows


# ------------------------------------------------------------- git push past deny and ask rules

GIT_PUSHES = {
    "plain": "git push -q origin main",
    "C-dot": "git -C . push -q origin main",
    "C-absolute": "git -C {project} push -q origin main",
    "no-pager": "git --no-pager push -q origin main",
    "P": "git -P push -q origin main",
    "c-setting": "git -c push.default=simple push -q origin main",
    "two-c-settings": "git -c color.ui=never -c core.quotepath=off push -q origin main",
    "git-dir-equals": "git --git-dir=.git push -q origin main",
    "git-dir-separate": "git --git-dir .git push -q origin main",
    "work-tree": "git --work-tree=. push -q origin main",
    "git-dir-and-work-tree": "git --git-dir=.git --work-tree=. push -q origin main",
    "literal-pathspecs": "git --literal-pathspecs push -q origin main",
    "no-optional-locks": "git --no-optional-locks push -q origin main",
    "exec-path": "git --exec-path=/usr/lib/git-core push -q origin main",
    "ansi-c-program": "g$'it' push -q origin main",
    "ansi-c-subcommand": "git $'push' -q origin main",
    "ansi-c-half-subcommand": "git pu$'sh' -q origin main",
    "hex-subcommand": r"git $'\x70ush' -q origin main",
    "absolute-program": "/usr/bin/git push -q origin main",
    "command-wrapper": "command git push -q origin main",
    "timeout-wrapper": "timeout 30 git push -q origin main",
    "env-wrapper": "env GIT_TRACE=0 git push -q origin main",
    "alias-to-push": "git -c alias.p=push p -q origin main",
    "shell-alias": "git -c alias.p='!git push -q origin main' p",
    "computed-subcommand": "X=push; git $X -q origin main",
    "bash-lc": "bash -lc 'git push -q origin main'",
    "sh-c-with-C": "sh -c 'git -C . push -q origin main'",
    "piped-to-bash": "echo 'git push -q origin main' | bash",
    "eval": "eval 'git --no-pager push -q origin main'",
}


def git_push_rows() -> list[Row]:
    pushed = created("{outside}/remote.git/refs/heads/main")
    rows: list[Row] = []
    for name, command in GIT_PUSHES.items():
        rows.append(
            Row(
                id=f"deny-git-push/{name}",
                cls="deny-escape",
                command=command,
                effect=pushed,
                expect=Defence.DENY,
                mode="yolo",
                deny=("Bash(git push *)",),
                fixture="git",
            )
        )
        rows.append(
            Row(
                id=f"ask-git-push/{name}",
                cls="ask-escape",
                command=command,
                effect=pushed,
                expect=Defence.ASK,
                mode="auto",
                ask=("Bash(git push *)",),
                fixture="git",
            )
        )
    return rows


ROWS: list[Row] = deny_rm_rows() + git_push_rows()
