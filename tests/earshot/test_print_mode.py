"""`earshot -p` end to end: a subprocess against a loopback OpenAI-compatible server configured
through user settings."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.earshot.support import (
    RUN_SECONDS,
    Env,
    earshot,
    make_env,
    text_reply,
    tool_messages,
    tool_reply,
)
from tests.loopback import Reply, loopback


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


async def test_tool_round_trip_prints_the_answer_and_sends_the_tool_result(env: Env) -> None:
    (env.workspace / "notes.txt").write_text("the launch code is 4217\n", encoding="utf-8")
    with loopback(
        tool_reply(("call_1", "read", {"path": "notes.txt"})),
        text_reply("The code is 4217."),
    ) as server:
        env.local_provider(server.url)
        run = await earshot(env, "-p", "What is the launch code in notes.txt?")
    assert run.code == 0, run.stderr
    assert run.stdout == "The code is 4217.\n"
    assert "local/test-model" in run.stderr  # which model, and why, goes to stderr
    first, second = (request.json() for request in server.requests)
    assert first["messages"][-1]["content"] == "What is the launch code in notes.txt?"
    assert first["model"] == "test-model"
    assert server.requests[0].headers["authorization"] == "Bearer test-key"
    results = tool_messages(second)
    assert [m["tool_call_id"] for m in results] == ["call_1"]
    assert "4217" in json.dumps(results[0]["content"])


async def test_continue_sends_the_previous_conversation(env: Env) -> None:
    with loopback(text_reply("Noted: blue."), text_reply("You said blue.")) as server:
        env.local_provider(server.url)
        first = await earshot(env, "-p", "Remember: my colour is blue.")
        second = await earshot(env, "--continue", "-p", "What colour did I say?")
    assert (first.code, second.code) == (0, 0), second.stderr
    assert second.stdout == "You said blue.\n"
    messages = server.requests[1].json()["messages"]
    texts = [json.dumps(m.get("content")) for m in messages]
    assert any("my colour is blue" in text for text in texts)
    assert any("Noted: blue." in text for text in texts)
    assert "What colour did I say?" in texts[-1]


async def test_resume_unknown_session_is_a_usage_error(env: Env) -> None:
    with loopback() as server:
        env.local_provider(server.url)
        run = await earshot(env, "--resume", "nosuchsession", "-p", "hi")
    assert run.code == 2
    assert "nosuchsession" in run.stderr
    assert server.requests == []


async def test_json_output_is_one_event_per_line(env: Env) -> None:
    (env.workspace / "a.txt").write_text("alpha\n", encoding="utf-8")
    with loopback(
        tool_reply(("call_1", "read", {"path": "a.txt"})), text_reply("It says alpha.")
    ) as server:
        env.local_provider(server.url)
        run = await earshot(env, "--output-format", "json", "-p", "read a.txt")
    assert run.code == 0, run.stderr
    lines = run.lines()
    kinds = [line["kind"] for line in lines]
    assert kinds[0] == "session" and lines[0]["model"] == "local/test-model"
    assert kinds[-1] == "result" and lines[-1]["exit_code"] == 0
    assert lines[-1]["text"] == "It says alpha."
    assert kinds[-2] == "turn_end" and lines[-2]["reason"] == "end_turn"
    for expected in ("turn_start", "user_message", "tool_call_ready", "tool_call_finished", "text"):
        assert expected in kinds
    finished = next(line for line in lines if line["kind"] == "tool_call_finished")
    assert finished["status"] == "completed"
    assert "alpha" in json.dumps(finished["result"])
    assert "".join(line["text"] for line in lines if line["kind"] == "text") == "It says alpha."


async def test_a_write_is_refused_in_ask_mode_and_exit_code_says_so(env: Env) -> None:
    with loopback(
        tool_reply(("call_1", "write", {"path": "out.txt", "content": "x"})),
        text_reply("I could not write it."),
    ) as server:
        env.local_provider(server.url)
        run = await earshot(env, "-p", "write out.txt")
    assert run.code == 3, run.stderr
    assert not (env.workspace / "out.txt").exists()
    assert "permission refused" in run.stderr
    results = tool_messages(server.requests[1].json())
    assert len(results) == 1


async def test_permission_mode_flag_lets_the_write_run(env: Env) -> None:
    with loopback(
        tool_reply(("call_1", "write", {"path": "out.txt", "content": "written"})),
        text_reply("Done."),
    ) as server:
        env.local_provider(server.url)
        run = await earshot(env, "--permission-mode", "accept-edits", "-p", "write out.txt")
    assert run.code == 0, run.stderr
    assert (env.workspace / "out.txt").read_text(encoding="utf-8") == "written"


async def test_an_allow_rule_in_settings_lets_the_write_run(env: Env) -> None:
    with loopback(
        tool_reply(("call_1", "write", {"path": "out.txt", "content": "ruled"})),
        text_reply("Done."),
    ) as server:
        env.local_provider(server.url, permissions={"allow": ["Write"]})
        run = await earshot(env, "-p", "write out.txt")
    assert run.code == 0, run.stderr
    assert (env.workspace / "out.txt").read_text(encoding="utf-8") == "ruled"


async def test_invalid_settings_name_file_and_key_without_echoing_the_key(env: Env) -> None:
    path = env.write_settings(
        {"providers": {"local": {"apiKey": "sk-very-secret-value", "baseUrl": 5, "colour": "x"}}}
    )
    run = await earshot(env, "-p", "hi")
    assert run.code == 2
    assert str(path) in run.stderr
    assert "providers.local.colour" in run.stderr
    assert "providers.local.baseUrl" in run.stderr
    assert "sk-very-secret-value" not in run.stderr + run.stdout


async def test_project_settings_merge_over_user_settings(env: Env) -> None:
    with loopback(text_reply("from the project model")) as server:
        env.local_provider(server.url)
        project = env.workspace / ".earshot" / "settings.json"
        project.parent.mkdir()
        project.write_text(json.dumps({"model": "local/project-model"}), encoding="utf-8")
        run = await earshot(env, "-p", "hi")
    assert run.code == 0, run.stderr
    assert server.requests[0].json()["model"] == "project-model"


async def test_without_credentials_print_mode_names_the_variables(env: Env) -> None:
    run = await earshot(env, "-p", "hi")
    assert run.code == 2
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        assert variable in run.stderr


async def test_a_model_flag_without_its_key_names_the_variable(env: Env) -> None:
    run = await earshot(env, "--model", "openai/gpt-5", "-p", "hi")
    assert run.code == 2
    assert "OPENAI_API_KEY" in run.stderr


async def test_model_error_exits_1(env: Env) -> None:
    refusal = Reply.json({"error": {"message": "bad request", "type": "invalid"}}, status=400)
    with loopback(refusal) as server:
        env.local_provider(server.url)
        run = await earshot(env, "-p", "hi")
    assert run.code == 1, run.stderr
    assert "error" in run.stderr


async def test_images_and_mentioned_files_go_into_the_prompt(env: Env) -> None:
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
    (env.workspace / "shot.png").write_bytes(png)
    (env.workspace / "plan.md").write_text("step one: tests\n", encoding="utf-8")
    with loopback(text_reply("Seen.")) as server:
        env.local_provider(server.url)
        run = await earshot(env, "--image", "shot.png", "-p", "Compare with @plan.md, please.")
    assert run.code == 0, run.stderr
    content = server.requests[0].json()["messages"][-1]["content"]
    text = " ".join(part.get("text", "") for part in content)
    assert "step one: tests" in text and 'path="plan.md"' in text
    images = [part for part in content if part["type"] == "image_url"]
    assert len(images) == 1
    assert images[0]["image_url"]["url"].startswith("data:image/png;base64,")


async def test_a_missing_image_is_a_usage_error(env: Env) -> None:
    with loopback() as server:
        env.local_provider(server.url)
        run = await earshot(env, "--image", "nope.png", "-p", "look")
    assert run.code == 2
    assert "nope.png" in run.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
async def test_ctrl_c_cancels_the_turn_saves_the_session_and_exits_130(env: Env) -> None:
    with loopback(
        tool_reply(("call_1", "bash", {"command": "sleep 30", "description": "wait"}))
    ) as server:
        env.local_provider(server.url)
        process = await anyio.open_process(
            [sys.executable, "-m", "earshot", "--permission-mode", "yolo"]
            + ["--output-format", "json", "-p", "wait a while"],
            cwd=env.workspace,
            env=env.environ(),
        )
        lines: list[dict[str, object]] = []
        async with process:
            assert process.stdout is not None
            with anyio.fail_after(RUN_SECONDS):
                buffer = b""
                sent = False
                async for chunk in process.stdout:
                    buffer += chunk
                    while b"\n" in buffer:
                        line, buffer = buffer.split(b"\n", 1)
                        lines.append(json.loads(line))
                        if lines[-1]["kind"] == "tool_call_running" and not sent:
                            process.send_signal(signal.SIGINT)
                            sent = True
                await process.wait()
    assert process.returncode == 130
    kinds = [line["kind"] for line in lines]
    end = next(line for line in lines if line["kind"] == "turn_end")
    assert end["reason"] == "cancelled"
    assert kinds[-1] == "result"
    session_id = str(lines[0]["session_id"])
    show = await earshot(env, "sessions", "show", session_id)
    assert show.code == 0
    assert "wait a while" in show.stdout
    assert "bash" in show.stdout


def block_undo(env: Env) -> None:
    """Make the undo snapshot fail (its directory is a file), so the agent logs a warning with a
    traceback during the turn."""
    undo = env.data_home / "earshot" / "undo"
    undo.parent.mkdir(parents=True, exist_ok=True)
    undo.write_text("not a directory\n", encoding="utf-8")


@pytest.mark.parametrize("output_format", ["json", "text"])
async def test_a_logged_warning_stays_off_stdout(env: Env, output_format: str) -> None:
    block_undo(env)
    with loopback(
        tool_reply(("call_1", "write", {"path": "out.txt", "content": "written"})),
        text_reply("Wrote it."),
    ) as server:
        env.local_provider(server.url)
        run = await earshot(
            env,
            "--permission-mode",
            "accept-edits",
            "--output-format",
            output_format,
            "-p",
            "write out.txt",
        )
    assert run.code == 0, run.stderr
    assert (env.workspace / "out.txt").read_text(encoding="utf-8") == "written"
    # The warning was logged, to stderr, as one JSON line with a plain traceback (no locals).
    [warning] = [line for line in run.stderr.splitlines() if "undo snapshot failed" in line]
    record = json.loads(warning)
    assert record["level"] == "warning"
    assert "Traceback" in record["exception"]
    assert "locals" not in run.stderr.lower()
    if output_format == "json":
        kinds = [line["kind"] for line in run.lines()]  # every stdout line is JSON
        assert kinds[0] == "session" and kinds[-1] == "result"
    else:
        assert run.stdout == "Wrote it.\n"


def text_reply_with_usage(text: str, prompt_tokens: int, completion_tokens: int) -> Reply:
    """A streamed answer whose last chunk reports usage (`stream_options.include_usage`)."""
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {
            "choices": [],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        },
    ]
    common = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "test-model"}
    body = "".join(f"data: {json.dumps({**common, **chunk})}\n\n" for chunk in chunks)
    return Reply(body=(body + "data: [DONE]\n\n").encode())


async def test_text_mode_ends_with_a_usage_line_on_stderr(env: Env) -> None:
    with loopback(text_reply_with_usage("Hi there.", 1200, 34)) as server:
        env.local_provider(server.url)
        run = await earshot(env, "-p", "hi")
    assert run.code == 0, run.stderr
    assert run.stdout == "Hi there.\n"
    [usage] = [line for line in run.stderr.splitlines() if line.startswith("earshot: usage: ")]
    assert usage.startswith("earshot: usage: tokens 1.2k in / 34 out, context ")
    assert usage.endswith("cost unknown")  # the loopback model has no price


async def test_resume_by_id_sends_that_conversation(env: Env) -> None:
    with loopback(
        text_reply("Noted: green."),
        text_reply("Another session."),
        text_reply("You said green."),
    ) as server:
        env.local_provider(server.url)
        first = await earshot(env, "--output-format", "json", "-p", "Remember: my colour is green.")
        # A newer session in the same directory: --resume must not mean "the latest".
        other = await earshot(env, "-p", "Unrelated.")
        session_id = first.lines()[0]["session_id"]
        second = await earshot(env, "--resume", session_id, "-p", "What colour did I say?")
    assert (first.code, other.code, second.code) == (0, 0, 0), second.stderr
    assert second.stdout == "You said green.\n"
    assert f"session {session_id} " in second.stderr
    messages = server.requests[2].json()["messages"]
    texts = [json.dumps(m.get("content")) for m in messages]
    assert any("my colour is green" in text for text in texts)
    assert any("Noted: green." in text for text in texts)
    assert not any("Unrelated." in text or "Another session." in text for text in texts)
    assert "What colour did I say?" in texts[-1]


async def test_a_call_refused_because_print_mode_cannot_ask_tells_the_model_why(env: Env) -> None:
    with loopback(
        tool_reply(("call_1", "write", {"path": "out.txt", "content": "x"})),
        text_reply("Understood."),
    ) as server:
        env.local_provider(server.url)
        run = await earshot(env, "-p", "write out.txt")
    assert run.code == 3, run.stderr
    [result] = tool_messages(server.requests[1].json())
    told = json.dumps(result["content"])
    assert "cannot ask in print mode; not allowed by the mode or a rule" in told
    assert "rejected by the user" not in told


async def test_result_text_keeps_the_messages_of_a_turn_apart(env: Env) -> None:
    (env.workspace / "a.txt").write_text("alpha\n", encoding="utf-8")
    with loopback(
        tool_reply(("call_1", "read", {"path": "a.txt"}), text="Reading it."),
        text_reply("It says alpha."),
    ) as server:
        env.local_provider(server.url)
        json_run = await earshot(env, "--output-format", "json", "-p", "read a.txt")
    assert json_run.code == 0, json_run.stderr
    assert json_run.lines()[-1]["text"] == "Reading it.\n\nIt says alpha."
    with loopback(
        tool_reply(("call_1", "read", {"path": "a.txt"}), text="Reading it."),
        text_reply("It says alpha."),
    ) as server:
        env.local_provider(server.url)
        text_run = await earshot(env, "-p", "read a.txt")
    assert text_run.stdout == "Reading it.\n\nIt says alpha.\n"


@pytest.mark.parametrize(
    "problem",
    ["invalid settings", "no credentials", "empty prompt", "unknown session"],
)
async def test_a_configuration_error_in_json_format_still_ends_with_a_result_line(
    env: Env, problem: str
) -> None:
    args = ["--output-format", "json", "-p", "hi"]
    match problem:
        case "invalid settings":
            env.write_settings({"providers": {"local": {"baseUrl": 5}}})
        case "no credentials":
            pass
        case "empty prompt":
            env.local_provider("http://127.0.0.1:9")
            args[-1] = "   "
        case _:
            env.local_provider("http://127.0.0.1:9")
            args = ["--resume", "nosuchsession", *args]
    run = await earshot(env, *args)
    assert run.code == 2
    result = run.lines()[-1]
    assert result["kind"] == "result"
    assert result["exit_code"] == 2
    assert result["error"] and result["error"] in run.stderr


async def test_resume_accepts_a_unique_prefix_and_lists_an_ambiguous_one(env: Env) -> None:
    with loopback(
        text_reply("Noted: red."),
        text_reply("Another one."),
        text_reply("You said red."),
    ) as server:
        env.local_provider(server.url)
        first = await earshot(env, "--output-format", "json", "-p", "Remember: my colour is red.")
        other = await earshot(env, "--output-format", "json", "-p", "Unrelated.")
        first_id, other_id = (run.lines()[0]["session_id"] for run in (first, other))
        common = os.path.commonprefix([first_id, other_id])
        unique = first_id[: len(common) + 1]
        ambiguous = await earshot(env, "--resume", common, "-p", "hi")
        resumed = await earshot(env, "--resume", unique, "-p", "What colour did I say?")
    assert ambiguous.code == 2
    assert "matches several sessions" in ambiguous.stderr
    assert first_id in ambiguous.stderr and other_id in ambiguous.stderr
    assert resumed.code == 0, resumed.stderr
    assert resumed.stdout == "You said red.\n"
    assert f"session {first_id} " in resumed.stderr
    assert len(server.requests) == 3  # the ambiguous run sent nothing
