"""How a call is shown to the user before they approve it: a command's title is the exact
command, and a call's arguments are bounded with their secrets masked."""

from __future__ import annotations

from agent.backends import command_title
from agent.tools import argument_summary, shown_arguments


def test_a_command_title_is_the_exact_command_then_the_description_as_a_comment() -> None:
    assert command_title('echo  "a  b"') == 'echo  "a  b"'  # spaces kept: exact
    assert command_title("rm -rf x && ls", "List files") == "rm -rf x && ls  # List files"
    assert command_title("ls", "ls") == "ls"
    assert command_title("ls", "  ") == "ls"


def test_a_description_cannot_pose_as_more_command_lines() -> None:
    title = command_title("rm -rf ~", "List files\nls -la\u2028echo safe")
    assert title == "rm -rf ~  # List files ls -la echo safe"
    assert title.count("\n") == 0


def test_a_multi_line_command_keeps_its_last_line_intact() -> None:
    heredoc = "cat > f <<'EOF'\nbody\nEOF"
    assert command_title(heredoc, "Write f") == f"{heredoc}\n# Write f"


def test_shown_arguments_mask_secrets_and_are_bounded() -> None:
    key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"
    shown = shown_arguments(
        {
            "query": f"find {key} please",
            "githubToken": "ghp_short",
            "password": 1234,
            "body": "x" * 1000,
            "items": list(range(25)),
            "deep": {"a": {"b": {"c": {"d": {"e": 1}}}}},
        }
    )
    assert isinstance(shown, dict)
    assert shown["query"] == "find [redacted] please"
    assert shown["githubToken"] == "[redacted]" and shown["password"] == "[redacted]"
    assert shown["body"] == "x" * 300 + "… (700 more characters)"
    assert shown["items"] == [*range(20), "… 5 more"]
    assert shown["deep"] == {"a": {"b": {"c": "…"}}}


def test_an_argument_summary_is_one_bounded_line() -> None:
    summary = argument_summary({"title": "Fix\nit", "api_key": "k", "n": 2})
    assert summary == 'title="Fix\\nit", api_key="[redacted]", n=2'
    assert len(argument_summary({"body": "y" * 500})) == 80
    assert argument_summary({}) == ""
