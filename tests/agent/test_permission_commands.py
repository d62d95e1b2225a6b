"""Command rules against a hostile command line: one table per promise of
`agent.permissions.commands` (the lab in `tests/security` runs the attacks for real; this table
also pins down what must stay allowed and what deny rules must not over-match)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.backends import Mode
from agent.permissions import PermissionRules, decide
from agent.shell import parse_command
from agent.tools import PermissionRequest

ROOT = Path("/work/project")


@dataclass(frozen=True)
class Case:
    command: str
    outcome: str
    mode: Mode = "ask"
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


def _decide(case: Case) -> str:
    rules = PermissionRules.parse(allow=case.allow, ask=case.ask, deny=case.deny)
    request = PermissionRequest(rule_tool="Bash", description="", command=case.command)
    return decide(rules, case.mode, request, read_only=False, roots=[ROOT]).outcome


ALLOWED = [
    Case("timeout 30 npm test", "allow", allow=("Bash(npm test *)",)),
    Case("nice -n 5 nohup npm test", "allow", allow=("Bash(npm test *)",)),
    Case("command npm test", "allow", allow=("Bash(npm test *)",)),
    Case("stdbuf -oL npm test", "allow", allow=("Bash(npm test *)",)),
    Case("bash -c 'npm test && npm run lint'", "allow", allow=("Bash(npm *)",)),
    Case("bash -lc 'npm test'", "allow", allow=("Bash(npm test *)",)),
    Case("git --no-pager log -3", "allow", allow=("Bash(git log *)",)),
    Case("git -P diff", "allow", allow=("Bash(git diff *)",)),
    Case("sudo apt install -y jq", "allow", allow=("Bash(sudo apt install *)",)),
    Case("echo $'a\\tb'", "allow", allow=("Bash(echo *)",)),
    Case("printf -v x %s 1", "allow", allow=("Bash(printf *)",)),
    Case("[ -f x ] && echo y", "allow", allow=("Bash([ *)", "Bash(echo *)")),
    Case("sed -n '1,5p' f", "allow", allow=("Bash(sed *)",)),
    Case("sed 's/a|b/c/g;s#x#y#' f", "allow", allow=("Bash(sed *)",)),
    Case("awk '{print $1}' f", "allow", allow=("Bash(awk *)",)),
    Case("awk '$3 > 100' f", "allow", allow=("Bash(awk *)",)),
    Case("find . -name '*.py' -newer x", "allow", allow=("Bash(find *)",)),
    Case("python3 tools/gen.py", "allow", allow=("Bash(python3 tools/gen.py)",)),
    Case("echo ${a[0]} ${#b[@]}", "allow", allow=("Bash(echo *)",)),
]
NOT_ALLOWED = [
    Case("timeout 5 rm -rf x", "ask", allow=("Bash(timeout *)",)),
    Case("sudo rm -rf x", "ask", allow=("Bash(sudo *)",)),
    Case("env rm x", "ask", allow=("Bash(env *)",)),
    Case("env A=1 npm test", "ask", allow=("Bash(npm test *)",)),
    Case("FOO=1 timeout 5 npm test", "ask", allow=("Bash(npm test *)",)),
    Case("xargs npm test", "ask", allow=("Bash(xargs *)", "Bash(npm test *)")),
    Case("find . -exec npm test \\;", "ask", allow=("Bash(find *)", "Bash(npm test *)")),
    Case("eval 'npm test'", "ask", allow=("Bash(eval *)", "Bash(npm test *)")),
    Case("python3 -c 'print(1)'", "ask", allow=("Bash(python3 *)",)),
    Case("node -pe 1", "ask", allow=("Bash(node *)",)),
    Case("perl -le 'print 1'", "ask", allow=("Bash(perl *)",)),
    Case("git -c core.pager=cat log", "ask", allow=("Bash(git *)",)),
    Case("git -C /tmp/other status", "ask", allow=("Bash(git status *)",)),
    Case("source .venv/bin/activate", "ask", allow=("Bash(source *)",)),
    Case("echo ${a[i]}", "ask", allow=("Bash(echo *)",)),
    Case("echo ${s:n}", "ask", allow=("Bash(echo *)",)),
    Case("declare -i n=x", "ask", allow=("Bash(declare *)",)),
    Case("PATH=. ls", "ask", allow=("Bash(PATH=*)",)),
    Case("export LD_PRELOAD=./x.so", "ask", allow=("Bash(export *)",)),
    Case("sed -n 'w out' f", "allow", allow=("Bash(sed *)",)),
    Case("echo $(( a[$(touch p)] ))", "ask", allow=("Bash(echo *)", "Bash(touch *)")),
    Case("[[ -v 'a[$(touch p)]' ]]", "ask", allow=("Bash([[ *)",)),
    Case("parallel touch ::: a b", "ask", allow=("Bash(parallel *)", "Bash(touch *)")),
    Case("awk '{print > \"out\"}' f", "ask", allow=("Bash(awk *)",)),
]
DENIED = [
    Case("git $X origin", "deny", mode="yolo", deny=("Bash(git push *)",)),
    Case("bash -c 'git \"$1\" origin' _ push", "deny", mode="yolo", deny=("Bash(git push *)",)),
    Case('rm -rf "$DIR"', "deny", mode="yolo", deny=("Bash(rm -rf /)",)),
    Case('[[ -d x ]] && bash -x -c "$C"', "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("(( 1 )) && echo rm | bash", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case(
        "python3 - <<'EOF'\nimport os\nos.system('rm -f x')\nEOF",
        "deny",
        "yolo",
        deny=("Bash(rm *)",),
    ),
    Case("gdb -batch -ex 'shell rm -f x'", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("rg --pre rm x", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("ssh -o ProxyCommand='rm -f x' h", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("tar -xf a.tar --to-command='rm -f x'", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("git rebase -x 'rm -f x' HEAD~1", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("git submodule foreach rm -f x", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("env -S'rm -f x'", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("echo ${x@P}", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("f() { bash; }; echo 'rm -f x' | f", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("{ bash; } <<< 'rm -f x'", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("git -C . push", "ask", mode="auto", ask=("Bash(git push *)",)),
    Case("echo 'rm x' | parallel", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("parallel rm ::: a b", "deny", mode="yolo", deny=("Bash(rm *)",)),
    Case("watch -n 1 rm x", "deny", mode="yolo", deny=("Bash(rm *)",)),
    # The whole line, as "always reject" saves it (issue 26.11), whitespace collapsed.
    Case("ls  &&  echo marker", "deny", mode="yolo", deny=("Bash(ls && echo marker)",)),
    Case("(cd x && make)", "deny", mode="yolo", deny=("Bash((cd x && make))",)),
]
NOT_DENIED = [
    Case('git commit -m "$MSG"', "allow", mode="yolo", deny=("Bash(git push *)",)),
    Case("[ -f x ] && cat x", "allow", mode="yolo", deny=("Bash(rm *)",)),
    Case("grep -rn 'rm -rf' .", "allow", mode="yolo", deny=("Bash(rm *)",)),
    Case("python3 script.py", "allow", mode="yolo", deny=("Bash(rm *)",)),
    Case("echo rm | cat", "allow", mode="yolo", deny=("Bash(rm *)",)),
    Case("git -C . status", "allow", mode="yolo", deny=("Bash(git push *)",)),
    Case("git push --help", "deny", mode="yolo", deny=("Bash(git push *)",)),
    Case("ls", "allow", mode="yolo", deny=("Bash(ls && echo marker)",)),
    Case("ls && echo other", "allow", mode="yolo", deny=("Bash(ls && echo marker)",)),
    Case(
        "cat <<'EOF' > notes.md\nrm is a command\nEOF", "allow", mode="yolo", deny=("Bash(rm *)",)
    ),
]


@pytest.mark.parametrize("case", ALLOWED + NOT_ALLOWED, ids=lambda c: c.command)
def test_allow_rules(case: Case) -> None:
    assert _decide(case) == case.outcome


@pytest.mark.parametrize("case", DENIED + NOT_DENIED, ids=lambda c: c.command)
def test_deny_and_ask_rules(case: Case) -> None:
    assert _decide(case) == case.outcome


@pytest.mark.parametrize(
    ("command", "computed"),
    [
        ("echo x > ~+/f", ("~+/f",)),
        ("echo x > ~-/f", ("~-/f",)),
        ("echo x > ~root/f", ("~root/f",)),
        ("echo x >> l*nk", ("l*nk",)),
        ("cd sub && echo x > f", ("f",)),
        ("pushd sub; cp a b", ("b",)),
        ("(cd /abs && touch f)", ("f",)),
        ("HOME=/tmp; echo x > ~/f", ("~/f",)),
        ("ln -s /etc/passwd l && echo x > l", ("l", "l")),
        ("touch x{a,b}", ("x{a,b}",)),
    ],
)
def test_write_targets_computed_at_run_time(command: str, computed: tuple[str, ...]) -> None:
    assert parse_command(command).computed_writes[: len(computed)] == computed


@pytest.mark.parametrize(
    "command",
    ['cp "$f" backup/', "rm -rf $DIR", "git diff $(echo x)", 'sort "$in"', 'sed -n "$s" f'],
)
def test_a_writer_given_a_computed_argument_may_write_anywhere(command: str) -> None:
    assert parse_command(command).computed_writes


@pytest.mark.parametrize("command", ['git commit -m "$MSG"', 'echo "$X" > out', "cat $F"])
def test_computed_arguments_of_other_commands_are_not_writes(command: str) -> None:
    assert parse_command(command).computed_writes == ()


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("cp -r src ../out", ("../out",)),
        ("cp -t ../out a b", ("../out",)),
        ("mv a b ../out", ("a", "b", "../out")),
        ("ln -s target name", ("name",)),
        ("ln target name", ("target", "name")),
        ("install -m 644 a /usr/local/x", ("/usr/local/x",)),
        ("chmod -R 755 d", ("d",)),
        ("dd if=a of=/dev/sdz bs=1M", ("/dev/sdz",)),
        ("sort -u -o out in", ("out",)),
        ("uniq in out", ("out",)),
        ("sed -i.bak 's/a/b/' f g", ("f", "g")),
        ("sed -n '/x/w out.txt' f", ("out.txt",)),
        ("tar czf ../a.tgz src", ("../a.tgz",)),
        ("tar -xzf a.tgz -C ../dst", ("../dst",)),
        ("curl -sSLo out https://x", ("out",)),
        ("wget -O out https://x", ("out",)),
        ("find ../x -name '*.o' -delete", ("../x",)),
        ("git -C ../other diff --output=d.patch", ("../other", "../other/d.patch")),
        ("git format-patch -o ../patches -3", ("../patches",)),
        ("gzip -c a > a.gz", ("a.gz",)),
        ("rsync -a src/ host:dst/", ()),
        ("rsync -a --exclude .git src/ ../dst/", ("../dst/",)),
        ("crontab jobs.txt", ()),
    ],
)
def test_writers(command: str, writes: tuple[str, ...]) -> None:
    assert parse_command(command).writes == writes
