"""The framing rules of the JSON-RPC reader (`acp_server.framing`): valid text in and out, bounded
errors, ids that can be echoed, responses told from requests."""

from __future__ import annotations

import json

from acp_server.framing import (
    MAX_ID_CHARS,
    RpcError,
    decode_message,
    encode_message,
    is_response,
    request_id_problem,
)


def test_decoded_text_is_valid_unicode() -> None:
    # The escape, and the bytes the stdlib decodes to a surrogate too (`surrogatepass`).
    assert decode_message(b'{"t": "a\\ud800b", "k\\uDC80": 1}') == {"t": "a\ufffdb", "k\ufffd": 1}
    assert decode_message(b'{"t": "a\xed\xa0\x80b"}') == {"t": "a\ufffdb"}
    # A pair stays a pair; an escaped backslash is not an escape.
    assert decode_message(b'{"t": "\\ud83d\\ude00", "u": "\\\\ud800"}') == {
        "t": "\U0001f600",
        "u": "\\ud800",
    }


def test_written_text_is_valid_utf8_without_surrogate_escapes() -> None:
    line = encode_message({"jsonrpc": "2.0", "method": "m", "params": {"text": "x\ud800"}})
    assert json.loads(line.decode("utf-8")) == {
        "jsonrpc": "2.0",
        "method": "m",
        "params": {"text": "x\ufffd"},
    }
    assert b"\\ud800" not in line


def test_an_error_bounds_what_it_quotes() -> None:
    huge = "x" * 1_000_000
    error = RpcError(-32601, f"method not found: {huge}", {"method": huge, "nested": [huge]})
    encoded = json.dumps(error.to_json())
    assert len(encoded) < 2000
    assert json.loads(encoded)["data"]["method"] == "x" * 199 + "\u2026"


def test_ids_that_cannot_be_echoed_and_responses() -> None:
    assert request_id_problem("a" * MAX_ID_CHARS) is None
    assert request_id_problem("a" * (MAX_ID_CHARS + 1)) is not None
    assert request_id_problem(1.5) == "bad id type"
    assert [request_id_problem(value) for value in (None, 7, "id")] == [None, None, None]
    assert is_response({"id": 1, "result": None})
    assert is_response({"error": {}})
    assert not is_response({"id": 1, "method": "m", "result": 1})
