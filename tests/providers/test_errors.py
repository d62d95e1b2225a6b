"""The error classifier against every vendor's failure texts.

SYNTHETIC: every message below is written from the texts quoted in providers.md section 8 (and
section 6 for envelopes and codes), not copied from a recorded response; ids, numbers and model
names are made up. The recorded ones (the insufficient-quota stream, OpenRouter's upstream 429 and
in-band error, Groq's `tool_use_failed` frame) are reproduced by their text only.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from providers.errors import (
    auth_secrets,
    classify,
    is_context_overflow,
    parse_retry_after,
    redact,
)
from providers.types import ErrorKind


@dataclass(frozen=True)
class Case:
    name: str
    provider: str
    status: int | None
    message: str
    kind: ErrorKind
    retryable: bool
    code: str | None = None
    retry_after: float | None = None
    """What the adapter parsed from a header or `retryDelay`."""
    expected_retry_after: float | None = None


CASES = [
    # ----------------------------------------------------------------------------- OpenAI chat
    Case(
        "openai chat overflow",
        "openai",
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted "
        "in 130012 tokens. Please reduce the length of the messages.",
        "context_overflow",
        False,
        code="context_length_exceeded",
    ),
    Case(
        "openai TPM look-alike: a rate limit that a retry cannot fix, not an overflow",
        "openai",
        429,
        "Request too large for gpt-4o in organization org-abc on tokens per min (TPM): "
        "Limit 30000, Requested 41234. The input or output tokens must be reduced in order to "
        "run successfully.",
        "rate_limit",
        False,
        code="rate_limit_exceeded",
    ),
    Case(
        "openai plain rate limit with the wait in the text",
        "openai",
        429,
        "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): "
        "Limit 30000, Used 29500, Requested 900. Please try again in 1.574s.",
        "rate_limit",
        True,
        code="rate_limit_exceeded",
        expected_retry_after=1.574,
    ),
    Case(
        "openai rate limit in milliseconds",
        "openai",
        429,
        "Rate limit reached for requests. Please try again in 20ms.",
        "rate_limit",
        True,
        expected_retry_after=0.02,
    ),
    Case(
        "openai retry-after header wins over the text",
        "openai",
        429,
        "Rate limit reached. Please try again in 1.574s.",
        "rate_limit",
        True,
        retry_after=7.0,
        expected_retry_after=7.0,
    ),
    Case(
        "openai insufficient_quota is a wall, not a wait",
        "openai",
        429,
        "You exceeded your current quota, please check your plan and billing details.",
        "rate_limit",
        False,
        code="insufficient_quota",
    ),
    Case(
        "openai bad key",
        "openai",
        401,
        "Incorrect API key provided: sk-proj-****abcd. You can find your API key at ...",
        "auth",
        False,
        code="invalid_api_key",
    ),
    Case("openai 500", "openai", 500, "The server had an error", "server", True),
    Case("openai 503", "openai", 503, "Service Unavailable", "server", True),
    Case(
        "openai 404 model",
        "openai",
        404,
        "The model `gpt-9` does not exist",
        "invalid_request",
        False,
    ),
    # ------------------------------------------------------------------------ OpenAI Responses
    Case(
        "openai responses overflow (400)",
        "openai",
        400,
        "Your input exceeds the context window of this model. Please adjust your input and try "
        "again.",
        "context_overflow",
        False,
        code="context_length_exceeded",
    ),
    Case(
        "openai responses overflow in-stream (response.failed)",
        "openai",
        None,
        "Your input exceeds the context window of this model. Please adjust your input and try "
        "again.",
        "context_overflow",
        False,
        code="context_length_exceeded",
    ),
    Case(
        "openai responses insufficient_quota in-stream",
        "openai",
        None,
        "You exceeded your current quota, please check your plan and billing details. For more "
        "information on this error, read the docs: https://platform.openai.com/docs/guides/"
        "error-codes/api-errors.",
        "rate_limit",
        False,
        code="insufficient_quota",
    ),
    Case(
        "openai responses server_error in-stream",
        "openai",
        None,
        "An error occurred while processing your request.",
        "server",
        True,
        code="server_error",
    ),
    Case(
        "openai responses reasoning replay rejected",
        "openai",
        400,
        "Item 'rs_123' of type 'reasoning' was provided without its required following item.",
        "invalid_request",
        False,
        code="invalid_request_error",
    ),
    # ------------------------------------------------------------------------------ Anthropic
    Case(
        "anthropic prompt too long",
        "anthropic",
        400,
        "prompt is too long: 208310 tokens > 200000 maximum",
        "context_overflow",
        False,
        code="invalid_request_error",
    ),
    Case(
        "anthropic input + max_tokens over the limit",
        "anthropic",
        400,
        "input length and `max_tokens` exceed context limit: 180000 + 64000 > 200000, decrease "
        "input length or `max_tokens` and try again",
        "context_overflow",
        False,
        code="invalid_request_error",
    ),
    Case(
        "anthropic 413 request_too_large is bytes, not tokens",
        "anthropic",
        413,
        "Request exceeds the maximum allowed number of bytes.",
        "invalid_request",
        False,
        code="request_too_large",
    ),
    Case(
        "anthropic 429 input tokens per minute",
        "anthropic",
        429,
        "This request would exceed the rate limit for your organization (org-1) of 40,000 input "
        "tokens per minute.",
        "rate_limit",
        True,
        code="rate_limit_error",
        retry_after=12.0,
        expected_retry_after=12.0,
    ),
    Case(
        "anthropic 529 overloaded",
        "anthropic",
        529,
        "Overloaded",
        "server",
        True,
        code="overloaded_error",
    ),
    Case(
        "anthropic overloaded mid-stream (status dropped by the adapter)",
        "anthropic",
        None,
        "Overloaded",
        "server",
        True,
        code="overloaded_error",
    ),
    Case(
        "anthropic overloaded mid-stream (status 200 passed through)",
        "anthropic",
        200,
        "Overloaded",
        "server",
        True,
        code="overloaded_error",
    ),
    Case(
        "anthropic 401",
        "anthropic",
        401,
        "invalid x-api-key",
        "auth",
        False,
        code="authentication_error",
    ),
    Case(
        "anthropic 404 model",
        "anthropic",
        404,
        "model: claude-sonet-4-5",
        "invalid_request",
        False,
        code="not_found_error",
    ),
    Case("anthropic api_error 500", "anthropic", 500, "Internal server error", "server", True),
    # ---------------------------------------------------------------------------------- Gemini
    Case(
        "gemini overflow",
        "google",
        400,
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        "context_overflow",
        False,
        code="INVALID_ARGUMENT",
    ),
    Case(
        "gemini overflow without the count",
        "google",
        400,
        "The input token count exceeds the maximum number of tokens allowed (1048576).",
        "context_overflow",
        False,
        code="INVALID_ARGUMENT",
    ),
    Case(
        "gemini RESOURCE_EXHAUSTED with retryDelay",
        "google",
        429,
        "Resource has been exhausted (e.g. check quota).",
        "rate_limit",
        True,
        code="RESOURCE_EXHAUSTED",
        retry_after=parse_retry_after("17s"),
        expected_retry_after=17.0,
    ),
    Case(
        "gemini per-minute quota worded like a billing wall is still a wait",
        "google",
        429,
        "You exceeded your current quota, please check your plan and billing details. "
        "Please retry in 56.9s.",
        "rate_limit",
        True,
        code="RESOURCE_EXHAUSTED",
        expected_retry_after=56.9,
    ),
    Case(
        "gemini 404",
        "google",
        404,
        "models/gemini-3.6-flahs is not found for API version v1beta",
        "invalid_request",
        False,
        code="NOT_FOUND",
    ),
    Case("gemini 503", "google", 503, "The model is overloaded.", "server", True, "UNAVAILABLE"),
    Case(
        "gemini bad key",
        "google",
        400,
        "API key not valid. Please pass a valid API key.",
        "auth",
        False,
        code="API_KEY_INVALID",
    ),
    Case(
        "gemini permission denied",
        "google",
        403,
        "Permission denied",
        "auth",
        False,
        code="PERMISSION_DENIED",
    ),
    # ------------------------------------------------------------------------------ OpenRouter
    Case(
        "openrouter overflow",
        "openrouter",
        400,
        "This endpoint's maximum context length is 163840 tokens. However, you requested about "
        '170000 tokens. Please reduce the length of either one, or use the "middle-out" '
        "transform to compress your prompt automatically.",
        "context_overflow",
        False,
    ),
    Case(
        "openrouter upstream 429",
        "openrouter",
        429,
        "Provider returned error (Google: google/gemini-2.0-flash-exp:free is temporarily "
        "rate-limited upstream. Please retry shortly)",
        "rate_limit",
        True,
    ),
    Case(
        # Recorded with 43 prompt tokens: whatever limit this is, compaction cannot help.
        "openrouter in-band 'Token limit reached' is not an overflow",
        "openrouter",
        400,
        "Token limit reached",
        "invalid_request",
        False,
    ),
    Case(
        "openrouter 402 credits",
        "openrouter",
        402,
        "Insufficient credits",
        "invalid_request",
        False,
    ),
    # ----------------------------------------------------------------------------------- Groq
    Case(
        "groq overflow",
        "groq",
        400,
        "Please reduce the length of the messages or completion.",
        "context_overflow",
        False,
        code="context_length_exceeded",
    ),
    Case(
        "groq in-stream tool_use_failed",
        "groq",
        None,
        "Tool call validation failed: parameters for tool get_something_by_name did not match "
        "schema",
        "invalid_request",
        False,
        code="tool_use_failed",
    ),
    Case(
        "groq 429",
        "groq",
        429,
        "Rate limit reached for model `llama-3.3-70b-versatile` on tokens per minute (TPM). "
        "Please try again in 2.5s.",
        "rate_limit",
        True,
        code="rate_limit_exceeded",
        expected_retry_after=2.5,
    ),
    # ------------------------------------------------------------------------------- DeepSeek
    Case(
        "deepseek overflow",
        "deepseek",
        400,
        "This model's maximum context length is 131072 tokens. However, you requested 140000 "
        "tokens (130000 in the messages, 10000 in the completion). Please reduce the length of "
        "the messages or completion.",
        "context_overflow",
        False,
        code="invalid_request_error",
    ),
    Case(
        "deepseek reasoning_content not passed back",
        "deepseek",
        400,
        "The `reasoning_content` in the thinking mode must be passed back to the API.",
        "invalid_request",
        False,
        code="invalid_request_error",
    ),
    # ----------------------------------------------------------------------------------- vLLM
    Case(
        "vllm overflow",
        "vllm",
        400,
        "This model's maximum context length is 32768 tokens. However, you requested 40000 "
        "tokens in the messages, Please reduce the length of the messages.",
        "context_overflow",
        False,
    ),
    Case(
        "vllm overflow, 'only N tokens' variant",
        "vllm",
        400,
        "The decoder prompt (length 40000) is longer than the maximum model length; this model's "
        "context length is only 32768 tokens.",
        "context_overflow",
        False,
    ),
    Case(
        "vllm input length variant",
        "vllm",
        400,
        "Input length (40000) exceeds the model's maximum context length (32768).",
        "context_overflow",
        False,
    ),
    # ------------------------------------------------------------------------------------ xAI
    Case(
        "xai overflow",
        "xai",
        400,
        "This model's maximum prompt length is 131072 but the request contains 150000 tokens.",
        "context_overflow",
        False,
    ),
    # ------------------------------------------------------------------------------ llama.cpp
    Case(
        "llama.cpp overflow",
        "llama.cpp",
        400,
        "the request exceeds the available context size, try increasing it",
        "context_overflow",
        False,
        code="exceed_context_size_error",
    ),
    Case(
        "llama.cpp server down",
        "llama.cpp",
        None,
        "Connection refused",
        "network",
        True,
    ),
    # ------------------------------------------------------------------------------ LM Studio
    Case(
        "lmstudio overflow",
        "lmstudio",
        400,
        "The number of tokens to keep from the initial prompt is greater than the context length.",
        "context_overflow",
        False,
    ),
    # -------------------------------------------------------------------------------- Mistral
    Case(
        "mistral overflow",
        "mistral",
        400,
        "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum "
        "context length",
        "context_overflow",
        False,
    ),
    Case("mistral bare 400", "mistral", 400, "", "context_overflow", False),
    Case(
        "cerebras bare 413", "cerebras", 413, "413 status code (no body)", "context_overflow", False
    ),
    Case("a bare 400 elsewhere is just invalid", "openai", 400, "", "invalid_request", False),
    # -------------------------------------------------------------------------- Bedrock-style
    Case(
        "bedrock overflow",
        "amazon-bedrock",
        400,
        "Input is too long for requested model.",
        "context_overflow",
        False,
        code="ValidationException",
    ),
    Case(
        "bedrock throttling",
        "amazon-bedrock",
        429,
        "Too many requests, please wait before trying again.",
        "rate_limit",
        True,
        code="ThrottlingException",
    ),
    # ----------------------------------------------------------------------------------- Kimi
    Case(
        "kimi overflow",
        "moonshotai",
        400,
        "Invalid request: Your request exceeded model token limit: 262144",
        "context_overflow",
        False,
        code="invalid_request_error",
    ),
    # -------------------------------------------------------------------------------- MiniMax
    Case(
        "minimax overflow",
        "minimax",
        400,
        "invalid params, context window exceeds limit (2013)",
        "context_overflow",
        False,
    ),
    # ---------------------------------------------------------------------------------- Azure
    Case(
        "azure token rate limit with the wait in the header",
        "azure",
        429,
        "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version "
        "2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. "
        "Please retry after 6 seconds. Please go here: https://aka.ms/oai/quotaincrease if you "
        "would like to further increase the default rate limit.",
        "rate_limit",
        True,
        retry_after=6.0,
        expected_retry_after=6.0,
    ),
    Case(
        "azure bad key",
        "azure",
        401,
        "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
        "provide a valid key for an active subscription and use a correct regional API endpoint "
        "for your resource.",
        "auth",
        False,
    ),
    Case(
        "azure content filter is a request the model will not take, not a wait",
        "azure",
        400,
        "The response was filtered due to the prompt triggering Azure OpenAI's content "
        "management policy. Please modify your prompt and retry.",
        "invalid_request",
        False,
        code="content_filter",
    ),
    Case(
        "azure overflow",
        "azure",
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted "
        "in 131000 tokens. Please reduce the length of the messages.",
        "context_overflow",
        False,
        code="context_length_exceeded",
    ),
    # --------------------------------------------------------------------------- Fireworks AI
    # Its 429 body is `{"error": "Too Many Requests", "message": ...}`: the text is top level
    # (GordeyZuev/LEAP#6).
    Case(
        "fireworks usage limit",
        "fireworks-ai",
        429,
        "You have exceeded your usage limits. Please try again later or contact Fireworks to "
        "explore dedicated capacity.",
        "rate_limit",
        True,
    ),
    # --------------------------------------------------------------------------------- Ollama
    Case(
        "ollama unknown model: a 404 whose type says api_error is not a server failure",
        "ollama",
        404,
        'model "llama9" not found, try pulling it first',
        "invalid_request",
        False,
        code="api_error",
    ),
    Case(
        "ollama runner crash",
        "ollama",
        500,
        "llama runner process has terminated: exit status 2",
        "server",
        True,
        code="api_error",
    ),
    # -------------------------------------------------------------------------- Google Vertex
    Case(
        "vertex resource exhausted",
        "google-vertex",
        429,
        "Resource exhausted. Please try again later. Please refer to "
        "https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.",
        "rate_limit",
        True,
        code="RESOURCE_EXHAUSTED",
    ),
    Case(
        "vertex permission denied",
        "google-vertex",
        403,
        "Permission 'aiplatform.endpoints.predict' denied on resource "
        "'//aiplatform.googleapis.com/projects/p/locations/global/publishers/google/models/m'.",
        "auth",
        False,
        code="PERMISSION_DENIED",
    ),
    Case(
        "vertex overflow",
        "google-vertex",
        400,
        "The input token count (1500000) exceeds the maximum number of tokens allowed (1048576).",
        "context_overflow",
        False,
        code="INVALID_ARGUMENT",
    ),
    # --------------------------------------------------------------------------- no response
    Case("unknown in-stream failure", "zai", None, "something odd", "unknown", False),
    Case("request timeout 408", "togetherai", 408, "Request Timeout", "server", True),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_classification_table(case: Case) -> None:
    error = classify(
        provider=case.provider,
        status=case.status,
        message=case.message,
        code=case.code,
        retry_after=case.retry_after,
        network=case.name == "llama.cpp server down",
    )
    assert (error.kind, error.retryable) == (case.kind, case.retryable)
    assert error.retry_after == case.expected_retry_after
    assert error.status == case.status
    assert error.provider == case.provider
    assert error.message.startswith(f"{case.provider}: ")


def test_the_table_covers_every_vendor() -> None:
    providers = {case.provider for case in CASES}
    assert {
        "openai",
        "anthropic",
        "google",
        "openrouter",
        "groq",
        "deepseek",
        "vllm",
        "xai",
        "llama.cpp",
        "lmstudio",
        "mistral",
        "amazon-bedrock",
        "moonshotai",
        "minimax",
        "azure",
        "fireworks-ai",
        "ollama",
        "google-vertex",
    } <= providers


def test_a_not_retryable_error_carries_no_wait() -> None:
    error = classify(
        provider="openai",
        status=429,
        message="You exceeded your current quota",
        code="insufficient_quota",
        retry_after=30.0,
    )
    assert not error.retryable
    assert error.retry_after is None


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-abcdefghijklmnop1234",
        "sk-ant-api03-abcdefghijklmnop",
        "AIzaSyA1234567890abcdefghijklmnop",
        "gsk_abcdefghijklmnop1234",
        "xai-abcdefghijklmnop1234",
        "hf_abcdefghijklmnop1234",
    ],
)
def test_a_key_in_a_message_is_redacted(secret: str) -> None:
    error = classify(
        provider="openai", status=401, message=f"Incorrect API key provided: {secret}."
    )
    assert secret not in error.message
    assert "[redacted]" in error.message
    assert error.kind == "auth"


@pytest.mark.parametrize(
    "text",
    [
        "GET https://generativelanguage.googleapis.com/v1beta/models?key=AbCdEf123456789 failed",
        "header x-api-key: test-key-0123456789 rejected",
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
    ],
)
def test_labelled_secrets_are_redacted(text: str) -> None:
    redacted = redact(text)
    assert "[redacted]" in redacted
    for fragment in ("AbCdEf123456789", "test-key-0123456789", "abcdefghijklmnopqrstuvwxyz"):
        assert fragment not in redacted


def test_redact_leaves_ordinary_text_alone() -> None:
    text = "prompt is too long: 208310 tokens > 200000 maximum (task-abc, risk-free)"
    assert redact(text) == text


def test_overflow_look_alikes() -> None:
    assert is_context_overflow("prompt is too long: 5 tokens > 4 maximum")
    assert not is_context_overflow("Request too large for gpt-4o on tokens per min (TPM)")
    assert not is_context_overflow("Token limit reached")


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("17s", 17.0), ("1.5s", 1.5), ("30", 30.0), (2, 2.0), (None, None), ("soon", None)],
)
def test_parse_retry_after(value: str | float | None, seconds: float | None) -> None:
    assert parse_retry_after(value) == seconds


def test_parse_retry_after_http_date_in_the_past_is_zero() -> None:
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_the_endpoints_own_secrets_are_redacted_whatever_their_shape() -> None:
    # A key of no known shape, echoed by a vendor: only knowing the key itself can mask it.
    key = "plainkey0123"
    error = classify(
        provider="custom",
        status=401,
        message=f"invalid key {key}; token opaque-token-xyz rejected",
        secrets=auth_secrets(key, {"X-Auth-Token": "opaque-token-xyz", "X-Title": "earshot"}),
    )
    assert key not in error.message and "opaque-token-xyz" not in error.message
    assert error.message == "custom: invalid key [redacted]; token [redacted] rejected"


def test_auth_secrets_come_from_the_key_and_credential_headers_only() -> None:
    headers = {"Authorization": "Bearer tok-123456", "X-Title": "earshot", "api-key": "k-987654"}
    assert auth_secrets("the-key", headers) == (
        "the-key",
        "Bearer tok-123456",
        "tok-123456",
        "k-987654",
    )
    assert auth_secrets(None) == ()


def test_redact_masks_given_secrets_but_not_tiny_ones() -> None:
    assert redact("a key abc and longsecret", ["abc", "longsecret", None]) == (
        "a key abc and [redacted]"
    )
