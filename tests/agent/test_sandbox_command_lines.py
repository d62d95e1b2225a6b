"""The sandbox's command lines as text: the macOS Seatbelt profile (which CI cannot run, so it is
tested here), bubblewrap's argument order, and how stopped commands are recognised."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.protected_paths import ProtectedPaths
from agent.sandbox.command_sandbox import Places, stopped_by_policy
from agent.sandbox.linux import MountPlan, bwrap_command, scrubbing_prefix
from agent.sandbox.macos import PROTECTED_COMPONENT, seatbelt_command, seatbelt_profile

ROOT = Path("/Users/me/project")
TEMP = Path("/private/var/folders/xy/abc/T/earshot-sandbox-1")


def places(
    *, network: bool = True, roots: tuple[Path, ...] = (ROOT,), temp: Path | None = TEMP
) -> Places:
    return Places(
        writable=roots,
        temp=temp,
        protected=ProtectedPaths(
            roots=roots,
            paths=(ROOT / ".git", ROOT / ".earshot", Path("/Users/me/.zshrc")),
            lexical=(ROOT / ".git", ROOT / ".earshot", Path("/Users/me/.zshrc")),
            hidden=(Path("/Users/me/.config/earshot"), Path("/Users/me/.local/share/earshot")),
        ),
        network=network,
    )


# ---------------------------------------------------------------------------- macOS


def test_the_profile_denies_writes_except_to_the_writable_places() -> None:
    profile = seatbelt_profile(places())
    text = profile.text
    assert text.startswith("(version 1)\n(allow default)\n")
    deny = text.index("(deny file-write*)")
    allow = text.index("(allow file-write*")
    assert deny < allow  # the later rule wins in SBPL: the allow carves out of the deny
    parameters = dict(profile.parameters)
    assert parameters["WRITABLE_0"] == str(ROOT)
    assert parameters["WRITABLE_1"] == str(TEMP)
    assert text.count('(subpath (param "WRITABLE_0"))') == 1
    assert text.count('(subpath (param "WRITABLE_1"))') == 1


def test_protected_places_are_excluded_inside_every_writable_place() -> None:
    profile = seatbelt_profile(places())
    parameters = dict(profile.parameters)
    protected = {name: value for name, value in parameters.items() if name.startswith("PROT")}
    assert set(protected.values()) == {f"{ROOT}/.git", f"{ROOT}/.earshot", "/Users/me/.zshrc"}
    for name in protected:
        # Once per writable place, inside its require-all.
        assert profile.text.count(f'(require-not (subpath (param "{name}")))') == 2
    # A .git or .earshot at any depth inside a root is refused too, existing or not.
    assert parameters["ROOT_0"] == str(ROOT)
    assert PROTECTED_COMPONENT == r"/\.(git|earshot)(/|$)"
    assert (
        f'(require-not (require-all (subpath (param "ROOT_0")) (regex #"{PROTECTED_COMPONENT}")))'
        in profile.text
    )


def test_paths_never_enter_the_profile_text() -> None:
    hostile = Path('/Users/me/pro")) (allow file-write* (subpath "/')
    profile = seatbelt_profile(places(roots=(hostile,)))
    assert str(hostile) not in profile.text
    assert ("WRITABLE_0", str(hostile)) in profile.parameters
    assert profile.text.count("(allow file-write*") == 1


def test_other_processes_are_out_of_sight_and_reach() -> None:
    text = seatbelt_profile(places()).text
    assert "(deny process-info*)\n(allow process-info* (target same-sandbox))" in text
    assert "(deny signal)\n(allow signal (target same-sandbox))" in text


def test_earshots_own_files_cannot_be_read() -> None:
    profile = seatbelt_profile(places())
    parameters = dict(profile.parameters)
    assert parameters["HIDDEN_0"] == "/Users/me/.config/earshot"
    assert parameters["HIDDEN_1"] == "/Users/me/.local/share/earshot"
    text = profile.text
    for name in ("HIDDEN_0", "HIDDEN_1"):
        rule = f'(deny file-read* (subpath (param "{name}")))'
        assert rule in text
        assert text.index(rule) > text.index("(allow default)")  # the later rule wins


def test_earshots_own_files_stay_readable_when_they_hold_the_workspace() -> None:
    config = Path("/Users/me/.config/earshot")
    inside = Places(
        writable=(config / "work",),
        protected=ProtectedPaths(roots=(config / "work",), paths=(), hidden=(config,)),
        network=True,
    )
    assert "file-read*" not in seatbelt_profile(inside).text


def test_the_network_is_cut_only_when_asked() -> None:
    assert "(remote ip)" not in seatbelt_profile(places()).text
    cut = seatbelt_profile(places(network=False)).text
    assert "(deny network-outbound (remote ip))" in cut
    assert "(deny network-inbound (local ip))" in cut


@pytest.mark.parametrize("network", [True, False])
def test_no_unix_socket_of_the_host_but_the_commands_own(network: bool) -> None:
    profile = seatbelt_profile(places(network=network, temp=TEMP))
    text = profile.text
    deny = text.index("(deny network-outbound (remote unix-socket))")
    own = text.index('(allow network-outbound (subpath (param "TEMP_0")))')
    assert deny < own  # the later rule wins
    assert dict(profile.parameters)["TEMP_0"] == str(TEMP)
    resolver = '(remote unix-socket (path-literal "/private/var/run/mDNSResponder"))'
    assert (resolver in text) is network  # names resolve only with the network on


def test_the_private_temp_dir_is_the_one_writable_temp_dir() -> None:
    profile = seatbelt_profile(places(temp=TEMP))
    writable = {value for name, value in profile.parameters if name.startswith("WRITABLE")}
    assert writable == {str(ROOT), str(TEMP)}  # not /private/tmp, not the user's $TMPDIR


def test_the_macos_command_line() -> None:
    command = seatbelt_command(places(temp=TEMP), ["bash", "-c", "make"], scrub_env=False)
    assert command[0].endswith("env")
    assert command[-4:] == ["--", "bash", "-c", "make"]
    assert f"-DWRITABLE_0={ROOT}" in command
    for name in ("SSH_AUTH_SOCK", "TMUX", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY"):
        assert command[command.index(name) - 1] == "-u"
    assert f"TMPDIR={TEMP}" in command
    assert command.index(f"TMPDIR={TEMP}") < command.index("/usr/bin/sandbox-exec")
    assert "ANTHROPIC_API_KEY" not in command
    scrubbed = seatbelt_command(places(temp=None), ["bash", "-c", "make"], scrub_env=True)
    assert not any(part.startswith("TMPDIR=") for part in scrubbed)
    assert scrubbed[scrubbed.index("ANTHROPIC_API_KEY") - 1] == "-u"
    assert scrubbed.index("/usr/bin/sandbox-exec") > scrubbed.index("ANTHROPIC_API_KEY")


# ---------------------------------------------------------------------------- Linux


def test_bwrap_mounts_in_order_read_only_then_writable_then_protected() -> None:
    plan = MountPlan(
        writable=(Path("/tmp/checkout"), Path("/home/me/project")),
        pinned=(Path("/tmp/checkout/deep"),),
        temp=Path("/tmp/earshot-sandbox-1"),
        read_only=(Path("/home/me/project/.git"),),
        placeholders=(Path("/home/me/project/.earshot"),),
        hidden_dirs=(Path("/run/user/1000"),),
        hidden_files=(Path("/run/docker.sock"),),
        network=False,
    )
    command = bwrap_command(
        "/usr/bin/bwrap", plan, ["bash", "-c", "ls"], cwd=Path("/home/me"), environment={"A": "b"}
    )
    text = " ".join(command)
    for flag in ("--unshare-user", "--unshare-pid", "--new-session", "--die-with-parent"):
        assert flag in command
    assert "--cap-drop ALL" in text
    assert "--unshare-net" in command
    order = [
        "--ro-bind / /",
        # The private temp dir hides the host's /tmp; a root there is bound again over it.
        "--bind /tmp/earshot-sandbox-1 /tmp",
        "--bind /tmp/checkout /tmp/checkout",
        "--bind /home/me/project /home/me/project",
        "--bind /tmp/checkout/deep /tmp/checkout/deep",
        "--ro-bind /home/me/project/.git /home/me/project/.git",
        "--tmpfs /home/me/project/.earshot --remount-ro /home/me/project/.earshot",
        "--dev /dev --proc /proc",
        "--tmpfs /run/user/1000 --remount-ro /run/user/1000",
        "--ro-bind /dev/null /run/docker.sock",
        "--unsetenv SSH_AUTH_SOCK",
        "--setenv A b",
        "--setenv TMPDIR /tmp",
        "--chdir /home/me -- bash -c ls",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)


def test_bwrap_in_the_shared_namespace_makes_no_network_of_its_own() -> None:
    plan = MountPlan(writable=(), network=False)
    assert "--unshare-net" in bwrap_command("bwrap", plan, ["true"], cwd=Path("/"))
    shared = bwrap_command("bwrap", plan, ["true"], cwd=Path("/"), shared_network=True)
    assert "--unshare-net" not in shared


def test_bwrap_shares_the_network_by_default() -> None:
    command = bwrap_command("bwrap", MountPlan(writable=()), ["true"], cwd=Path("/"))
    assert "--unshare-net" not in command


def test_an_inherited_environment_is_scrubbed_before_bwrap_starts() -> None:
    prefix = scrubbing_prefix()
    assert prefix[0].endswith("env")
    assert prefix[prefix.index("OPENAI_API_KEY") - 1 :][:2] == ["-u", "OPENAI_API_KEY"]
    assert "GITHUB_TOKEN" not in prefix  # kept for gh and git, as in every command


# ------------------------------------------------------------------ stopped commands


@pytest.mark.parametrize(
    ("output", "network", "stopped"),
    [
        ("touch: cannot touch '/etc/x': Read-only file system", True, True),
        ("OSError: [Errno 30] Read-only file system: '/x'", True, True),
        ("open /x: read-only file system", True, True),  # Go
        ("rm: cannot remove '.git': Device or resource busy", True, True),
        ("Cannot connect to the Docker daemon at unix:///var/run/docker.sock", True, True),
        ("curl: (6) Could not resolve host: example.com", False, True),
        ("curl: (6) Could not resolve host: example.com", True, False),
        ("ConnectionRefusedError: [Errno 111] Connection refused", False, True),
        ("FAILED tests/test_x.py::test_y - AssertionError", True, False),
        ("", True, False),
    ],
)
def test_what_counts_as_stopped_by_the_sandbox(output: str, network: bool, stopped: bool) -> None:
    assert (stopped_by_policy(output, network=network) is not None) is stopped
