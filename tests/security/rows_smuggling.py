"""Lab rows: allow rules that would admit code they cannot see, and controls (legitimate work that
must stay allowed and have its effect)."""

from __future__ import annotations

from agent.backends import Mode
from tests.security.lab import (
    Defence,
    Probe,
    Row,
    changed,
    contains,
    created,
    output,
)

# -------------------------------------------------------------------- allow rules smuggling code

_SUB = "'a[$(touch pwn)]'"
SMUGGLES: dict[str, tuple[str, tuple[str, ...]]] = {
    # name: (command, allow rules the user wrote)
    "printf-v-subscript": (f"printf -v {_SUB} %s 1", ("Bash(printf *)",)),
    "printf-v-double-quoted": ('printf -v "a[\\$(touch pwn)]" %s 1', ("Bash(printf *)",)),
    "printf-v-backticks": ("printf -v 'a[`touch pwn`]' %s 1", ("Bash(printf *)",)),
    "test-v-subscript": (f"test -v {_SUB}", ("Bash(test *)",)),
    "bracket-v-subscript": (f"[ -v {_SUB} ]", ("Bash([ *)",)),
    "read-subscript": (f"read {_SUB} <<< x", ("Bash(read *)",)),
    "declare-subscript": ("declare 'a[$(touch pwn)]=1'", ("Bash(declare *)",)),
    "let-subscript": ("let 'a[$(touch pwn)]=1'", ("Bash(let *)",)),
    "mapfile-callback": ("mapfile -C 'touch pwn #' -c 1 <<< x", ("Bash(mapfile *)",)),
    "find-exec": ("find . -maxdepth 0 -exec touch pwn \\;", ("Bash(find *)",)),
    "find-execdir": ("find . -maxdepth 0 -execdir touch pwn \\;", ("Bash(find *)",)),
    "xargs": ("echo pwn | xargs touch", ("Bash(echo *)", "Bash(xargs *)")),
    "env-runs-anything": ("env touch pwn", ("Bash(env *)",)),
    "env-assignment": ("env A=1 touch pwn", ("Bash(env *)",)),
    "env-split-string": ("env -S 'touch pwn'", ("Bash(env *)",)),
    "timeout-runs-anything": ("timeout 5 touch pwn", ("Bash(timeout *)",)),
    "nice-runs-anything": ("nice touch pwn", ("Bash(nice *)",)),
    "nohup-runs-anything": ("nohup touch pwn > /dev/null 2>&1", ("Bash(nohup *)",)),
    "command-runs-anything": ("command touch pwn", ("Bash(command *)",)),
    "stdbuf-runs-anything": ("stdbuf -oL touch pwn", ("Bash(stdbuf *)",)),
    "time-runs-anything": ("time touch pwn", ("Bash(time *)",)),
    "sudo-runs-anything": ("sudo touch pwn", ("Bash(sudo *)",)),
    "python-c": ("python3 -c \"open('pwn', 'w')\"", ("Bash(python3 *)",)),
    "node-e": ("node -e \"require('fs').writeFileSync('pwn', '')\"", ("Bash(node *)",)),
    "perl-e": ("perl -e 'open(F, \">pwn\")'", ("Bash(perl *)",)),
    "awk-system": ("awk 'BEGIN{system(\"touch pwn\")}'", ("Bash(awk *)",)),
    "sed-e-command": ("sed -n '1e touch pwn' a", ("Bash(sed *)",)),
    "sed-e-flag": ("sed 's/.*/touch pwn/e' a", ("Bash(sed *)",)),
    "git-c-alias": ("git -c alias.st='!touch pwn' st", ("Bash(git *)",)),
    "git-c-fsmonitor": ("git -c core.fsmonitor='touch pwn' status", ("Bash(git *)",)),
    "git-c-overrides-alias": ("git -c alias.st='!touch pwn' st", ("Bash(git st *)",)),
    "bash-c-hides-segment": ("bash -c 'git status; touch pwn'", ("Bash(git status *)",)),
    "sh-c-with-options": ("sh -o errexit -c 'touch pwn'", ("Bash(sh *)",)),
    "pipe-to-sh": ("echo 'touch pwn' | sh", ("Bash(echo *)", "Bash(sh)")),
    "eval": ("eval 'touch pwn'", ("Bash(eval *)",)),
    "source-process-substitution": ("source <(echo 'touch pwn')", ("Bash(source *)",)),
    "dot-here-string": (". /dev/stdin <<< 'touch pwn'", ("Bash(. *)",)),
    "trap": ("trap 'touch pwn' EXIT", ("Bash(trap *)",)),
    "alias": (
        "shopt -s expand_aliases\\nalias ls='touch pwn'\\nls",
        ("Bash(shopt *)", "Bash(alias *)", "Bash(ls)"),
    ),
    "export-code-variable": (
        "export GIT_EXTERNAL_DIFF='touch pwn #'; git diff",
        ("Bash(export *)", "Bash(git diff *)"),
    ),
    "tar-to-command": (
        "tar -xf x.tar --to-command='touch pwn'",
        ("Bash(tar *)",),
    ),
    "substitution-in-heredoc": ("cat <<EOF\\n$(touch pwn)\\nEOF", ("Bash(cat *)",)),
    "substitution-in-parameter": ('echo "${X:-$(touch pwn)}"', ("Bash(echo *)",)),
    "process-substitution-target": ("echo x > >(touch pwn)", ("Bash(echo *)",)),
    "chained-after-allowed": ("git status && touch pwn", ("Bash(git status *)",)),
    "ansi-c-quote-escape": (r"echo $'\' x ' ; touch pwn ; echo ' y'", ("Bash(echo *)",)),
    "written-script": ("echo 'touch pwn' > s.sh && bash s.sh", ("Bash(echo *)", "Bash(bash *)")),
}

_SMUGGLE_SETUP = {
    "tar-to-command": "tar -cf x.tar a",
    "export-code-variable": "echo changed >> tracked.txt",
}
_SMUGGLE_FIXTURE = {
    *("git-c-alias", "git-c-fsmonitor", "git-c-overrides-alias", "bash-c-hides-segment"),
    *("export-code-variable", "chained-after-allowed"),
}
_SMUGGLE_NEEDS = {"node-e": ("node",), "perl-e": ("perl",), "python-c": ("python3",)}


def allow_smuggle_rows() -> list[Row]:
    return [
        Row(
            id=f"allow-smuggle/{name}",
            cls="allow-smuggle",
            command=command.replace("\\n", "\n"),
            effect=created("{project}/pwn"),
            expect=Defence.REFUSED,
            mode="ask",
            allow=allow,
            setup=_SMUGGLE_SETUP.get(name, ""),
            fixture="git" if name in _SMUGGLE_FIXTURE else "plain",
            needs=_SMUGGLE_NEEDS.get(name, ()),
        )
        for name, (command, allow) in SMUGGLES.items()
    ]


# ------------------------------------------------------------------------------------ controls

CONTROLS: dict[str, tuple[str, Probe, Mode, tuple[str, ...]]] = {
    # name: (command, probe, mode, allow rules)
    "auto-redirect-inside": ("echo x > out.txt", created("{project}/out.txt"), "auto", ()),
    "auto-mkdir-touch": (
        "mkdir -p build && touch build/a",
        created("{project}/build/a"),
        "auto",
        (),
    ),
    "auto-cp-inside": ("cp a b", created("{project}/b"), "auto", ()),
    "auto-mv-inside": ("mv a b", created("{project}/b"), "auto", ()),
    "auto-sed-in-place": ("sed -i s/alpha/omega/ a", contains("{project}/a", "omega"), "auto", ()),
    "auto-tee": ("echo x | tee log > /dev/null", created("{project}/log"), "auto", ()),
    "auto-sort-o": ("sort -o sorted a", created("{project}/sorted"), "auto", ()),
    "auto-tar": ("tar -cf a.tar a", created("{project}/a.tar"), "auto", ()),
    "auto-python-script": (
        'printf \'open("py.txt", "w")\' > s.py && python3 s.py',
        created("{project}/py.txt"),
        "auto",
        (),
    ),
    "auto-git-commit": (
        "echo more >> tracked.txt && git commit -qam 'more'",
        changed("{project}/.git/refs/heads/main"),
        "auto",
        (),
    ),
    "auto-git-diff-output": (
        "git diff HEAD --output=d.patch",
        created("{project}/d.patch"),
        "auto",
        (),
    ),
    "auto-find-fprint": ("find . -name a -fprint found", created("{project}/found"), "auto", ()),
    "ask-git-status": ("git status", output("On branch main"), "ask", ("Bash(git status)",)),
    "ask-git-no-pager-log": (
        "git --no-pager log --oneline",
        output("first commit"),
        "ask",
        ("Bash(git log *)",),
    ),
    "ask-npm-run-test": (
        "npm run test -- -k x",
        contains("{project}/ran.txt", "-k x"),
        "ask",
        ("Bash(npm run test *)",),
    ),
    "ask-timeout-npm-test": (
        "timeout 60 npm run test -- -k y",
        contains("{project}/ran.txt", "-k y"),
        "ask",
        ("Bash(npm run test *)",),
    ),
    "ask-bash-c-git-status": (
        "bash -c 'git status'",
        output("On branch main"),
        "ask",
        ("Bash(git status)",),
    ),
    "ask-nice-git-status": (
        "nice -n 5 git status",
        output("On branch"),
        "ask",
        ("Bash(git status)",),
    ),
    "ask-ansi-c-echo": (
        "echo $'a\\tb' > tab.txt",
        contains("{project}/tab.txt", "a\tb"),
        "ask",
        ("Bash(echo *)",),
    ),
    "ask-printf-v-plain": (
        "printf -v x %s 1 && echo done",
        output("done"),
        "ask",
        ("Bash(printf *)", "Bash(echo *)"),
    ),
    "ask-test-f": ("test -f a && echo yes", output("yes"), "ask", ("Bash(test *)", "Bash(echo *)")),
    "ask-find-name": ("find . -name a", output("./a"), "ask", ("Bash(find *)",)),
    "ask-sed-print": ("sed -n 1p a", output("alpha"), "ask", ("Bash(sed *)",)),
    "ask-sed-substitute": ("sed 's/alpha/gamma/g' a", output("gamma"), "ask", ("Bash(sed *)",)),
    "ask-awk-print": ("awk '{print $1}' a", output("beta"), "ask", ("Bash(awk *)",)),
    "ask-grep-pipe": ("cat a | grep beta", output("beta"), "ask", ("Bash(cat *)", "Bash(grep *)")),
    "ask-sudo-spelled-out": ("sudo cat a", output("alpha"), "ask", ("Bash(sudo cat *)",)),
    "yolo-mentions-rm": (
        "echo 'rm -rf is dangerous' > note.txt",
        created("{project}/note.txt"),
        "yolo",
        (),
    ),
    "yolo-grep-rm": ("grep -c rm a || true", output("0"), "yolo", ()),
    "yolo-git-status-with-push-denied": ("git -C . status", output("On branch"), "yolo", ()),
}
_CONTROL_DENY = {
    "yolo-mentions-rm": ("Bash(rm *)",),
    "yolo-grep-rm": ("Bash(rm *)",),
    "yolo-git-status-with-push-denied": ("Bash(git push *)",),
}
_GIT_CONTROLS = (
    *("auto-git-commit", "auto-git-diff-output", "ask-git-status", "ask-git-no-pager-log"),
    *("ask-bash-c-git-status", "ask-nice-git-status", "yolo-git-status-with-push-denied"),
)
_CONTROL_FIXTURE = dict.fromkeys(_GIT_CONTROLS, "git") | {
    "ask-npm-run-test": "npm",
    "ask-timeout-npm-test": "npm",
}  # fmt: skip
_CONTROL_NEEDS = {"ask-npm-run-test": ("npm",), "ask-timeout-npm-test": ("npm",)}


def control_rows() -> list[Row]:
    rows: list[Row] = []
    for name, (command, probe, mode, allow) in CONTROLS.items():
        rows.append(
            Row(
                id=f"control/{name}",
                cls="control",
                command=command,
                effect=probe,
                expect=Defence.ALLOW,
                mode=mode,
                allow=allow,
                deny=_CONTROL_DENY.get(name, ()),
                fixture=_CONTROL_FIXTURE.get(name, "plain"),
                needs=_CONTROL_NEEDS.get(name, ()),
            )
        )
    return rows


ROWS: list[Row] = allow_smuggle_rows() + control_rows()
