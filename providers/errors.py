"""The error taxonomy, and the one vendor-neutral classifier every adapter calls.

Each wire adapter extracts (status, message, code, type, retry-after) from its SDK's exception in
exactly one `_map_errors` place and hands them to `classify`; this module decides the kind.
Context overflow has no shared status code anywhere, so it is recognised from the message text
(providers.md section 8), and its look-alikes (a tokens-per-minute 429, `insufficient_quota`) are
ruled out first; the window the message states, when it states one, is read here too
(`ProviderError.context_limit`). Vendor text is parsed nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from providers.types import ErrorKind, ProviderError


class ProviderException(Exception):
    """Raised where a provider failure cannot travel as an `ErrorEvent` (e.g. catalog refresh)."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(error.message)
        self.error = error


_OVERFLOW_PATTERNS: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"prompt is too long",
        r"input length and `?max_tokens`? exceed context limit",
        r"exceeds the context window",
        r"maximum context length is",
        r"context length is only \d+ tokens",
        r"input token count.*exceeds the maximum",
        r"please reduce the length of the messages",
        r"maximum prompt length is",
        r"exceeds the available context size",
        r"greater than the context length",
        r"too large for model with \d+ maximum context length",
        r"input is too long for requested model",
        r"exceeded model token limit",
        r"context window exceeds limit",
        r"input length.*exceeds.*context length",
        r"context_length_exceeded",
        r"model_context_window_exceeded",
        r"request exceeds the maximum context",
    )
)

_NOT_OVERFLOW_PATTERNS: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"tokens per min",
        r"\(TPM\)",
        r"per minute",
        r"rate limit",
        r"insufficient_quota",
        r"exceeded your current quota",
    )
)

_QUOTA_CODES: Final = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
_QUOTA_TEXT: Final = re.compile(r"insufficient_quota|exceeded your current quota", re.IGNORECASE)
_TPM_TOO_LARGE: Final = re.compile(
    r"request too large for .*(tokens per min|\(TPM\))", re.IGNORECASE | re.DOTALL
)
# A bare 400/413 with no body is how Cerebras and Mistral report an over-long prompt (pi-mono
# `overflow.ts`); elsewhere an empty 4xx means nothing in particular.
_BARE_OVERFLOW_PROVIDERS: Final = frozenset({"cerebras", "mistral"})
_AUTH_CODES: Final = frozenset(
    {
        "authentication_error",
        "permission_error",
        "invalid_api_key",
        "unauthenticated",
        "permission_denied",
        "api_key_invalid",
        "missing_credentials",
    }
)
_RATE_CODES: Final = frozenset({"rate_limit_error", "rate_limit_exceeded", "resource_exhausted"})
_OVERLOAD_CODES: Final = frozenset(
    {
        "overloaded_error",
        "api_error",
        "server_error",
        "internal",
        "unavailable",
        "internal_server_error",
        "service_unavailable",
    }
)
_INVALID_CODES: Final = frozenset(
    {
        "invalid_request_error",
        "invalid_argument",
        "not_found_error",
        "not_found",
        "tool_use_failed",
        "failed_precondition",
        "request_too_large",
    }
)


_STATED_LIMITS: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"tokens? > (\d[\d,]*) maximum",  # Anthropic
        r"maximum context length is (\d[\d,]*)",  # OpenAI, OpenRouter, vLLM
        r"maximum number of tokens allowed \((\d[\d,]*)\)",  # Gemini
        r"maximum prompt length is (\d[\d,]*)",  # xAI
        r"context length is only (\d[\d,]*)",  # vLLM
        r"> (\d[\d,]*), decrease input length",  # Anthropic, input + max_tokens
    )
)


def stated_limit(message: str) -> int | None:
    """The token limit an overflow message states, if it states one."""
    for pattern in _STATED_LIMITS:
        match = pattern.search(message)
        if match is not None:
            return int(match.group(1).replace(",", ""))
    return None


def is_context_overflow(message: str, code: str | None = None) -> bool:
    """Whether a failure text means the prompt did not fit the model's context window."""
    text = f"{code or ''} {message}"
    if any(pattern.search(text) for pattern in _NOT_OVERFLOW_PATTERNS):
        return False
    return any(pattern.search(text) for pattern in _OVERFLOW_PATTERNS)


def parse_retry_after(value: str | float | None) -> float | None:
    """Seconds from a `retry-after` header (seconds or HTTP date), `retry-after-ms`-style numbers
    already divided, or a Gemini `retryDelay` like `"17s"`."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return max(0.0, float(value))
    text = value.strip()
    if text.endswith("s") and text[:-1].replace(".", "", 1).isdigit():
        return float(text[:-1])
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    # Here, not at the top: `email.utils` (with `socket`, `calendar`, `random`...) costs ~10 ms on
    # the way to a session's answer, and an HTTP-date retry-after is rare.
    from datetime import UTC, datetime
    from email.utils import parsedate_to_datetime

    try:
        return max(0.0, (parsedate_to_datetime(text) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def _retry_hint(message: str) -> float | None:
    match = re.search(r"(?:try again|retry) in (\d+(?:\.\d+)?)\s*(ms|s)\b", message, re.IGNORECASE)
    if match is None:
        return None
    amount = float(match.group(1))
    return amount / 1000 if match.group(2).lower() == "ms" else amount


def classify(
    *,
    provider: str,
    status: int | None,
    message: str,
    code: str | None = None,
    retry_after: float | None = None,
    network: bool = False,
    secrets: Iterable[str | None] = (),
) -> ProviderError:
    """Turn what a vendor said into a `ProviderError`.

    Args:
        provider: the provider id, for messages.
        status: the HTTP status; None (or 200) for an error that arrived inside a stream.
        message: the vendor's message text (never a credential: callers pass body text only).
        code: the vendor's error code or type, lower-cased by this function.
        retry_after: seconds the vendor asked to wait, if it said.
        network: the request never got a response (connection refused, reset, timeout).
        secrets: the endpoint's own key and auth header values (`auth_secrets`): any occurrence
            in the message is masked, whatever its shape, since a vendor may echo a key back.
    """
    code_norm = code.lower() if code else None
    kind: ErrorKind
    if network:
        kind = "network"
    elif _is_billing_wall(message, code_norm):
        # A billing wall looks like a 429 but waiting does not help.
        return _not_retryable_rate_limit(provider, message, status, code, secrets)
    elif _TPM_TOO_LARGE.search(message):
        # One request bigger than the whole per-minute budget: retrying the same request can
        # never succeed, though a smaller one (after compaction) can. Not an overflow either.
        return _not_retryable_rate_limit(provider, message, status, code, secrets)
    elif is_context_overflow(message, code_norm) or _is_bare_overflow(provider, status, message):
        kind = "context_overflow"
    elif status in (401, 403) or code_norm in _AUTH_CODES:
        kind = "auth"
    elif status == 429 or code_norm in _RATE_CODES:
        kind = "rate_limit"
    elif (status is not None and (status >= 500 or status in (408, 409))) or (
        # A "server" code counts only where the status does not say otherwise: Ollama answers
        # an unknown model with 404 and type `api_error`.
        code_norm in _OVERLOAD_CODES and (status is None or status < 400)
    ):
        kind = "server"
    elif (status is not None and 400 <= status < 500) or code_norm in _INVALID_CODES:
        kind = "invalid_request"
    else:
        kind = "unknown"
    retryable = kind in ("rate_limit", "server", "network")
    if retry_after is None and retryable:
        retry_after = _retry_hint(message)
    return ProviderError(
        kind=kind,
        message=_with_provider(provider, message, secrets),
        retryable=retryable,
        retry_after=retry_after if retryable else None,
        status=status,
        code=code,
        provider=provider,
        context_limit=stated_limit(message) if kind == "context_overflow" else None,
    )


def _is_billing_wall(message: str, code: str | None) -> bool:
    if code in _QUOTA_CODES:
        return True
    # Gemini words its per-minute RESOURCE_EXHAUSTED as "You exceeded your current quota" too,
    # with a retryDelay: that one passes once the minute is over.
    return code != "resource_exhausted" and _QUOTA_TEXT.search(message) is not None


def _is_bare_overflow(provider: str, status: int | None, message: str) -> bool:
    text = message.strip().lower()
    bare = not text or text in ("(no body)", "no body") or re.fullmatch(r"4(00|13)\b.*", text)
    return provider in _BARE_OVERFLOW_PROVIDERS and status in (400, 413) and bool(bare)


def _not_retryable_rate_limit(
    provider: str,
    message: str,
    status: int | None,
    code: str | None,
    secrets: Iterable[str | None],
) -> ProviderError:
    return ProviderError(
        kind="rate_limit",
        message=_with_provider(provider, message, secrets),
        retryable=False,
        status=status,
        code=code,
        provider=provider,
    )


def _with_provider(provider: str, message: str, secrets: Iterable[str | None]) -> str:
    message = redact(message.strip() or "no message", secrets)
    return f"{provider}: {message}" if provider else message


_SECRET_PATTERN: Final = re.compile(
    r"(sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|"
    r"(?i:bearer)\s+[A-Za-z0-9._\-]{12,}|gsk_[A-Za-z0-9]{12,}|xai-[A-Za-z0-9]{12,}|"
    r"hf_[A-Za-z0-9]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|"
    r"(?<![A-Za-z0-9])fw_[A-Za-z0-9]{12,}|csk-[A-Za-z0-9]{12,})"
)
# A key in a URL (`?key=`, Gemini's query parameter) or after an `api-key:` label.
_LABELLED_SECRET: Final = re.compile(
    r"(?i)((?:[?&]key=)|(?:api[_-]?key|x-goog-api-key|authorization)[\"']?\s*[:=]\s*[\"']?)"
    r"[A-Za-z0-9._\-]{8,}"
)


# Shorter "secrets" are not real keys, and masking them would garble ordinary words.
_MIN_SECRET_LENGTH: Final = 4
_AUTH_HEADER_WORDS: Final = ("auth", "key", "token", "secret", "cookie", "signature")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Mask credentials in `text`: every occurrence of one of `secrets` (the endpoint's actual
    key and auth header values, whatever their shape), then anything shaped like a known API
    key or labelled as one. Vendors sometimes echo a bad key, or a prefix of it, back.

    For any text that may reach a log line or a user: error messages, tool output quoting a
    request, exception reprs.
    """
    real = {secret for secret in secrets if secret and len(secret) >= _MIN_SECRET_LENGTH}
    # Longest first, so a value that contains another secret is masked whole.
    for secret in sorted(real, key=len, reverse=True):
        text = text.replace(secret, "[redacted]")
    text = _LABELLED_SECRET.sub(lambda match: f"{match.group(1)}[redacted]", text)
    return _SECRET_PATTERN.sub("[redacted]", text)


def auth_secrets(api_key: str | None, headers: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values `redact` must mask for an endpoint: its key, and the values of its headers
    whose names look like credentials (`Authorization`, `x-api-key`, `X-Auth-Token`...), with
    the token after an auth scheme (`Bearer <token>`) on its own too."""
    found: list[str] = [api_key] if api_key else []
    for name, value in (headers or {}).items():
        if not value or not any(word in name.lower() for word in _AUTH_HEADER_WORDS):
            continue
        found.append(value)
        scheme, _, token = value.partition(" ")
        if token and scheme.isalpha():
            found.append(token.strip())
    return tuple(found)
