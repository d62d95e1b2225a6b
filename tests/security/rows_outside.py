"""Lab rows: writes outside the project the policy must see (redirections, common writers, paths
computed at run time, links made earlier in the same command line)."""

from __future__ import annotations

from tests.security.lab import (
    Defence,
    Row,
    changed,
    created,
    deleted,
)

# ---------------------------------------------------------------- writes outside the project

OUTSIDE_WRITES: dict[str, tuple[str, str]] = {
    # name: (command, the outside path it creates or changes)
    "cp": ("cp a ../outside/f", "created:{outside}/f"),
    "cp-target-directory": ("cp -t ../outside a", "created:{outside}/a"),
    "cp-into-home": ("cp a ~/f", "created:{home}/f"),
    "mv-out": ("mv a ../outside/", "created:{outside}/a"),
    "mv-in-removes-outside": ("mv ../outside/victim stolen", "deleted:{outside}/victim"),
    "install": ("install a ../outside/f", "created:{outside}/f"),
    "hard-link": ("ln ../outside/victim hl && echo x >> hl", "changed:{outside}/victim"),
    "symlink-then-write": ("ln -s ../outside/victim l && echo x >> l", "changed:{outside}/victim"),
    "symlink-dir-then-write": ("ln -s ../outside d && echo x > d/f", "created:{outside}/f"),
    "touch": ("touch ../outside/f", "created:{outside}/f"),
    "touch-brace": ("touch ../out{side/f,x}", "created:{outside}/f"),
    "tee": ("tee ../outside/f <<< x > /dev/null", "created:{outside}/f"),
    "tee-append-bashrc": ("echo 'alias ls=x' | tee -a ~/.bashrc", "changed:{home}/.bashrc"),
    "mkdir": ("mkdir ../outside/d", "created:{outside}/d"),
    "mkdir-p": ("mkdir -p ../outside/d/e", "created:{outside}/d"),
    "rm": ("rm ../outside/victim", "deleted:{outside}/victim"),
    "truncate": ("truncate -s 0 ../outside/victim", "changed:{outside}/victim"),
    "chmod": ("chmod 600 ../outside/victim", "changed:{outside}/victim"),
    "shred": ("shred -u ../outside/victim", "deleted:{outside}/victim"),
    "dd": ("dd if=a of=../outside/f status=none", "created:{outside}/f"),
    "sort-o": ("sort -o ../outside/f a", "created:{outside}/f"),
    "sort-o-attached": ("sort -o../outside/f a", "created:{outside}/f"),
    "sort-output-long": ("sort --output=../outside/f a", "created:{outside}/f"),
    "uniq-output": ("uniq a ../outside/f", "created:{outside}/f"),
    "split-prefix": ("split a ../outside/x", "created:{outside}/xaa"),
    "sed-in-place": ("sed -i s/outside/hacked/ ../outside/victim", "changed:{outside}/victim"),
    "sed-w-command": ("sed -n 'w ../outside/f' a", "created:{outside}/f"),
    "awk-print-redirect": ("awk '{print > \"../outside/f\"}' a", "created:{outside}/f"),
    "tar-create": ("tar -cf ../outside/a.tar a", "created:{outside}/a.tar"),
    "tar-old-style-create": ("tar cf ../outside/a.tar a", "created:{outside}/a.tar"),
    "tar-extract-C": ("tar -cf x.tar a && tar -xf x.tar -C ../outside", "created:{outside}/a"),
    "gzip-in-place": ("gzip -k ../outside/victim", "created:{outside}/victim.gz"),
    "curl-output": ("curl -s -o ../outside/f file://{project}/a", "created:{outside}/f"),
    "curl-bundled-output": ("curl -sSo ../outside/f file://{project}/a", "created:{outside}/f"),
    "find-fprint": ("find . -maxdepth 0 -fprint ../outside/f", "created:{outside}/f"),
    "find-delete": ("find ../outside -name victim -delete", "deleted:{outside}/victim"),
    "git-diff-output": ("git diff --output=../outside/f", "created:{outside}/f"),
    "git-log-output": ("git log --output=../outside/f", "created:{outside}/f"),
    "git-format-patch": ("git format-patch -q -o ../outside/p -1", "created:{outside}/p"),
    "git-archive": ("git archive -o ../outside/a.tar HEAD", "created:{outside}/a.tar"),
    "git-clone": ("git clone -q . ../outside/c", "created:{outside}/c"),
    "git-C-init": ("git -C ../outside init -q", "created:{outside}/.git"),
    "cd-then-redirect": ("cd .. && echo x > outside/f", "created:{outside}/f"),
    "cd-then-touch": ("cd ../outside && touch f", "created:{outside}/f"),
    "subshell-cd-absolute": ("(cd {outside} && echo x > f)", "created:{outside}/f"),
    "pushd": ("pushd ../outside > /dev/null && echo x > f", "created:{outside}/f"),
    "popd": (
        "pushd ../outside > /dev/null && pushd {project} > /dev/null && popd > /dev/null"
        " && echo x > f",
        "created:{outside}/f",
    ),
    "tilde-plus": ("echo x > ~+/../outside/f", "created:{outside}/f"),
    "tilde-plus-bashrc": ("echo 'alias ls=x' >> ~+/../home/.bashrc", "changed:{home}/.bashrc"),
    "tilde-minus": ("cd ../outside; cd {project}; echo x > ~-/f", "created:{outside}/f"),
    "glob-through-symlink": ("echo x >> l*nk", "changed:{outside}/victim"),
    "glob-directory": ("echo x >> ../outs*/victim", "changed:{outside}/victim"),
    "env-chdir": ("env -C ../outside touch f", "created:{outside}/f"),
    "exec-redirect": ("exec > ../outside/f; echo x", "created:{outside}/f"),
    "sudo-cp": ("sudo cp a ../outside/f", "created:{outside}/f"),
    "xargs-cp": ("echo a | xargs cp -t ../outside", "created:{outside}/a"),
    "find-exec-cp": ("find . -name a -exec cp {} ../outside/f \\;", "created:{outside}/f"),
    "redirect-literal": ("echo x > ../outside/f", "created:{outside}/f"),
    "computed-option-cp": ('X=--target-directory=../outside; cp "$X" a', "created:{outside}/a"),
    "computed-option-sort": ('sort "$(echo -o../outside/f)" a', "created:{outside}/f"),
    "computed-option-git-diff": ("git diff $(echo --output=../outside/f)", "created:{outside}/f"),
    "injected-file-name": (
        'touch ./--target-directory=..; for f in --t*; do cp "$f" a; done',
        "created:{lab}/a",
    ),
    "bash-c-redirect": ("bash -c 'echo x > ../outside/f'", "created:{outside}/f"),
}
_OUTSIDE_SETUP = {"glob-through-symlink": "ln -s ../outside/victim lnk"}
_OUTSIDE_GIT = {
    *("git-diff-output", "git-log-output", "git-format-patch", "git-archive", "git-clone"),
    *("git-C-init", "computed-option-git-diff"),
}
_OUTSIDE_NEEDS = {"curl-output": ("curl",), "curl-bundled-output": ("curl",)}
_PROBES = {"created": created, "deleted": deleted, "changed": changed}


def outside_write_rows() -> list[Row]:
    rows: list[Row] = []
    for name, (command, where) in OUTSIDE_WRITES.items():
        kind, path = where.split(":", 1)
        rows.append(
            Row(
                id=f"outside-write/{name}",
                cls="outside-write",
                command=command,
                effect=_PROBES[kind](path),
                expect=Defence.ASK,
                mode="auto",
                setup=_OUTSIDE_SETUP.get(name, ""),
                fixture="git" if name in _OUTSIDE_GIT else "plain",
                needs=_OUTSIDE_NEEDS.get(name, ()),
            )
        )
    # with an allow rule that covers the program, in ask mode: still asks
    rows.append(
        Row(
            id="outside-write/allowed-echo-to-bashrc",
            cls="outside-write",
            command="echo 'alias ls=x' >> ~+/../home/.bashrc",
            effect=changed("{home}/.bashrc"),
            expect=Defence.ASK,
            mode="ask",
            allow=("Bash(echo *)",),
            setup="",
        )
    )
    rows.append(
        Row(
            id="outside-write/allowed-git-diff-computed-option",
            cls="outside-write",
            command="git diff $(echo --output=../outside/f)",
            effect=created("{outside}/f"),
            expect=Defence.ASK,
            mode="ask",
            allow=("Bash(git diff *)", "Bash(echo *)"),
            fixture="git",
        )
    )
    rows.append(
        Row(
            id="outside-write/allowed-cp",
            cls="outside-write",
            command="cp a ../outside/f",
            effect=created("{outside}/f"),
            expect=Defence.ASK,
            mode="ask",
            allow=("Bash(cp *)",),
        )
    )
    return rows


ROWS: list[Row] = outside_write_rows()
