"""Wire adapter for the Gemini API (`streamGenerateContent`), through `google-genai` (3.x).

The SDK is imported only when the first request is made. The request builder and the stream
translator are pure; `GeminiModel.stream` is the thin I/O shell around them.

Quirks handled here (providers.md section 4):
- google-genai 3.x defaults to API version `v1`; the adapter asks for `v1beta`, where the
  `-preview`/`-latest` models and thought signatures live. Vertex AI (`options["vertexai"]`) gets
  `v1beta1`, the SDK's own Vertex default, pinned so `GOOGLE_GENAI_API_VERSION` cannot move it.
- Vertex authenticates with an API key (express mode) when the endpoint has one, else with
  Application Default Credentials, which the SDK loads on the first request: missing ADC is an
  `auth` error of that stream, never an exception at construction.
- A `thoughtSignature` belongs to the exact part it came on (a functionCall part, or a text
  part). The SDK holds it as bytes; it rides in metadata as standard base64 under
  `{"gemini": {"thought_signature": ...}}` and goes back, decoded to the same bytes, on the
  same part.
- Function calls arrive whole, usually without an id: ids are synthesised per stream, and
  results go back with that id and the call's name, in order.
- `finishReason` is `STOP` even when the model called tools, so tool use is inferred from the
  calls. Usage is repeated in every frame and can change, so only the last frame counts.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, assert_never, cast

from providers.errors import classify, parse_retry_after
from providers.model import Endpoint
from providers.types import (
    Finish,
    FinishReason,
    ImagePart,
    Message,
    ModelRequest,
    Part,
    ProviderError,
    ProviderMetadata,
    ReasoningDelta,
    ReasoningEffort,
    ReasoningPart,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolChoice,
    ToolChoiceNamed,
    ToolResultPart,
    Usage,
    parse_tool_arguments,
)
from providers.wire.sdk_model import SdkKeyNotFound, SdkModel, with_request_url
from providers.wire.streaming import StreamEndedEarly, TranslatorBase, VendorStream
from providers.wire.vendor_json import (
    JsonDict,
    arguments_object,
    retry_after_seconds,
    strip_version_suffix,
)

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from google.genai import Client
    from google.genai.types import GenerateContentResponse
    from google.genai.types import Part as GeminiPart

NAMESPACE: Final = "gemini"
"""The provider-metadata namespace of this wire API, whichever provider id routed it."""

API_VERSION: Final = "v1beta"
VERTEX_API_VERSION: Final = "v1beta1"

_FILTERED: Final = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)

_THINKING_BUDGETS: Final[Mapping[ReasoningEffort, int]] = {
    "minimal": 0,
    "low": 1024,
    "medium": 4096,
    "high": 16384,
}

_ADC_HINT: Final = (
    "Vertex AI has no usable Google credentials (run `gcloud auth application-default login`, "
    "set GOOGLE_APPLICATION_CREDENTIALS, or set GOOGLE_VERTEX_API_KEY for express mode)"
)


def create_model(
    model_id: str, endpoint: Endpoint, *, http_client: object | None = None
) -> GeminiModel:
    """A `providers.model.Model` for `model_id` on a Gemini API endpoint.

    Args:
        model_id: the vendor's model id (`gemini-3-pro-preview`...).
        endpoint: key, base URL and extra headers for the SDK client.
        http_client: an `httpx2.AsyncClient` to use instead of the SDK's own (tests).
    """
    return GeminiModel(model_id, endpoint, http_client=http_client)


class GeminiModel(SdkModel["Client"]):
    """Streams `generateContent` calls; the SDK client is built on the first call."""

    def _touch(self, client: Client) -> None:
        _ = client.aio.models  # the resource module loads on first access

    def _new_client(self) -> Client:
        from google.genai import Client
        from google.genai.types import HttpOptions

        settings = client_settings(self._endpoint)
        options = HttpOptions(
            api_version=VERTEX_API_VERSION if settings["vertexai"] else API_VERSION,
            base_url=sdk_base_url(self._endpoint.base_url),
            headers=dict(self._endpoint.headers) or None,
            # No retry_options: one attempt. The agent owns the retry policy.
            httpx_async_client=cast("Any", self._http_client),
        )
        try:
            return Client(**settings, http_options=options)
        except ValueError as exc:
            # Every ValueError of the constructor is about credentials: "No API key was
            # provided" (none given, none in GOOGLE_API_KEY / GEMINI_API_KEY), or "Project or
            # API key must be set" on Vertex.
            raise SdkKeyNotFound(str(exc)) from exc

    async def _close_client(self, client: Client) -> None:
        await client.aio.aclose()

    async def _open(self, request: ModelRequest) -> VendorStream:
        params = _build_params(self._model_id, request, self._endpoint)
        models: Any = self._sdk_client().aio.models  # its `contents` union names PIL types
        chunks = cast(
            "AsyncGenerator[GenerateContentResponse]",
            await models.generate_content_stream(**params),
        )
        return VendorStream(chunks, chunks.aclose)

    def _new_translator(self) -> _StreamTranslator:
        return _StreamTranslator()

    def _map_errors(self, exc: Exception) -> ProviderError:
        return _map_errors(exc, self.provider_id, self._secrets)


def warm_up() -> None:
    """Load what the first call loads (the SDK, its HTTP stack, the async models API) by
    building a throwaway client that is never used (`registry.first_call_warm_up`)."""
    from google.genai import Client

    client = Client(vertexai=False, api_key="unused")
    _ = client.aio.models


def client_settings(endpoint: Endpoint) -> dict[str, Any]:
    """The `genai.Client` keyword arguments (bar `http_options`) for an endpoint. Pure.

    `vertexai` is always passed explicitly: left out, the SDK would read
    `GOOGLE_GENAI_USE_VERTEXAI` and could send a Gemini API key to Vertex. On Vertex, a key means
    express mode; without one the SDK uses Application Default Credentials for `project`. The
    location goes only with a project: alone, the SDK would build a `projects/None/...` path.
    """
    if not endpoint.options.get("vertexai"):
        return {"vertexai": False, "api_key": endpoint.api_key}
    settings: dict[str, Any] = {"vertexai": True, "api_key": endpoint.api_key}
    project = endpoint.options.get("project")
    if isinstance(project, str) and project:
        location = endpoint.options.get("location")
        settings["project"] = project
        settings["location"] = location if isinstance(location, str) and location else "global"
    return settings


def sdk_base_url(base_url: str | None) -> str | None:
    """The SDK adds the API version to the path itself; catalog URLs often end in one."""
    return strip_version_suffix(base_url, ("/v1beta1", "/v1beta", "/v1"))


# ------------------------------------------------------------------------------ request


def _build_params(model_id: str, request: ModelRequest, endpoint: Endpoint) -> JsonDict:
    """The keyword arguments of `generate_content_stream` for one request. Pure.

    `contents` and `config` are the SDK's dict forms (snake_case; signatures and inline data as
    bytes); the SDK turns them into the JSON body.
    """
    del endpoint  # nothing endpoint-specific goes in the body
    config: JsonDict = {
        # The SDK would otherwise try to run Python callables as tools; ours are declarations.
        "automatic_function_calling": {"disable": True},
    }
    if request.system:
        config["system_instruction"] = request.system
    if request.max_output_tokens is not None:
        config["max_output_tokens"] = request.max_output_tokens
    if request.tools:
        config["tools"] = [
            {
                "function_declarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters_json_schema": tool.input_schema,
                    }
                    for tool in request.tools
                ]
            }
        ]
        config["tool_config"] = {"function_calling_config": _tool_choice(request.tool_choice)}
    if request.reasoning_effort is not None:
        config["thinking_config"] = _thinking_config(model_id, request.reasoning_effort)
    return {"model": model_id, "contents": build_contents(request.messages), "config": config}


def _tool_choice(choice: ToolChoice) -> JsonDict:
    match choice:
        case "auto":
            return {"mode": "AUTO"}
        case "none":
            return {"mode": "NONE"}
        case "required":
            return {"mode": "ANY"}
        case ToolChoiceNamed():
            return {"mode": "ANY", "allowed_function_names": [choice.name]}
        case _:
            assert_never(choice)


def _thinking_config(model_id: str, effort: ReasoningEffort) -> JsonDict:
    include = effort != "minimal"
    if model_id.removeprefix("models/").startswith(("gemini-1", "gemini-2")):
        # Gemini 2.x takes a token budget; 3.x replaced it with a level.
        return {"thinking_budget": _THINKING_BUDGETS[effort], "include_thoughts": include}
    return {"thinking_level": effort.upper(), "include_thoughts": include}


def build_contents(messages: Sequence[Message]) -> list[JsonDict]:
    """Neutral history to Gemini `contents`: tool results become `user` function responses and
    consecutive contents of one role are merged."""
    contents: list[JsonDict] = []
    for message in messages:
        role = "model" if message.role == "assistant" else "user"
        parts = [converted for part in message.parts for converted in _parts(part, message.role)]
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return contents


def _parts(part: Part, role: str) -> list[JsonDict]:
    match part:
        case TextPart():
            signature = _signature_bytes(part.provider_metadata)
            if not part.text and signature is None:
                # A trailing `{"text": ""}` part carries nothing.
                return []
            return [_with_signature({"text": part.text}, signature)]
        case ImagePart():
            return [_media_part(part)]
        case ReasoningPart():
            signature = _signature_bytes(part.provider_metadata)
            if role != "assistant" or signature is None:
                # Gemini ignores thought summaries in history: only a signed thought part must
                # go back. Reasoning from another provider is dropped rather than sent as
                # text, which would turn its private reasoning into words it said.
                return []
            return [_with_signature({"text": part.text, "thought": True}, signature)]
        case ToolCallPart():
            call: JsonDict = {"id": part.id, "name": part.name, "args": arguments_object(part)}
            signature = _signature_bytes(part.provider_metadata)
            return [_with_signature({"function_call": call}, signature)]
        case ToolResultPart():
            return [_function_response(part)]
        case _:
            assert_never(part)


def _with_signature(part: JsonDict, signature: bytes | None) -> JsonDict:
    if signature is not None:
        part["thought_signature"] = signature
    return part


def _signature_bytes(metadata: ProviderMetadata) -> bytes | None:
    value = metadata.get(NAMESPACE, {}).get("thought_signature")
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        # Not ours to fix: send nothing rather than a corrupted signature.
        return None


def _media_part(part: ImagePart) -> JsonDict:
    if part.url is not None:
        return {"file_data": {"file_uri": part.url, "mime_type": part.media_type}}
    return {"inline_data": {"mime_type": part.media_type, "data": _image_bytes(part)}}


def _image_bytes(part: ImagePart) -> bytes:
    return base64.b64decode(part.data or "")


def _function_response(part: ToolResultPart) -> JsonDict:
    key = "error" if part.is_error else "output"
    response: JsonDict = {"id": part.tool_call_id, "name": part.name, "response": {key: part.text}}
    # Images ride as function-response parts (Gemini 3 reads multimodal results).
    media = [_media_part(item) for item in part.content if isinstance(item, ImagePart)]
    if media:
        response["parts"] = media
    return {"function_response": response}


# ------------------------------------------------------------------------------- stream


class _StreamTranslator(TranslatorBase):
    """Turns `GenerateContentResponse` frames into `StreamEvent`s, one stream's state.

    Gemini restarts part numbering in every frame, so part indexes are the translator's own:
    consecutive text (or thought) frames extend one part until another kind of part, or a
    signature, closes it.
    """

    def __init__(self, call_id_prefix: str | None = None) -> None:
        super().__init__()
        self._call_prefix = call_id_prefix or f"gemini_call_{uuid.uuid4().hex[:12]}"
        self._calls = 0
        self._next_index = 0
        self._open: tuple[str, int] | None = None
        self._finish_reason: str | None = None
        self._blocked: str | None = None

    def feed(self, chunk: GenerateContentResponse) -> list[StreamEvent]:
        """Translate one streamed frame."""
        if chunk.usage_metadata is not None:
            meta = chunk.usage_metadata
            thoughts = meta.thoughts_token_count or 0
            self._usage = Usage(
                input_tokens=(meta.prompt_token_count or 0)
                + (meta.tool_use_prompt_token_count or 0),
                cached_input_tokens=meta.cached_content_token_count or 0,
                output_tokens=(meta.candidates_token_count or 0) + thoughts,
                reasoning_tokens=thoughts,
            )
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason is not None and not chunk.candidates:
            self._blocked = _enum_text(feedback.block_reason)
        if not chunk.candidates:
            return []
        candidate = chunk.candidates[0]
        events: list[StreamEvent] = []
        if candidate.content is not None:
            for part in candidate.content.parts or []:
                events.extend(self._part(part))
        if candidate.finish_reason is not None:
            self._finish_reason = _enum_text(candidate.finish_reason)
        return events

    def _part(self, part: GeminiPart) -> list[StreamEvent]:
        metadata: ProviderMetadata = {}
        if part.thought_signature:
            encoded = base64.b64encode(part.thought_signature).decode("ascii")
            metadata = {NAMESPACE: {"thought_signature": encoded}}
        if part.function_call is not None:
            self._open = None
            self._next_index += 1
            return self._call(part, metadata)
        if part.text is None or (not part.text and not metadata):
            return []
        kind = "reasoning" if part.thought else "text"
        if self._open is not None and self._open[0] == kind:
            index = self._open[1]
        else:
            index = self._next_index
            self._next_index += 1
        # A signature seals the part it came on: later text starts a new part.
        self._open = None if metadata else (kind, index)
        if kind == "reasoning":
            return [ReasoningDelta(text=part.text, index=index, provider_metadata=metadata)]
        return [TextDelta(text=part.text, index=index, provider_metadata=metadata)]

    def _call(self, part: GeminiPart, metadata: ProviderMetadata) -> list[StreamEvent]:
        call = part.function_call
        assert call is not None
        self._calls += 1
        call_id = call.id or f"{self._call_prefix}_{self._calls}"
        name = call.name or ""
        raw = json.dumps(call.args or {})
        arguments, invalid = parse_tool_arguments(raw)
        return [
            ToolCallStart(call_id=call_id, name=name, provider_metadata=metadata),
            ToolCallDelta(call_id=call_id, arguments_delta=raw),
            ToolCallEnd(
                call_id=call_id,
                name=name,
                arguments=arguments,
                raw_arguments=raw,
                invalid_reason=invalid,
            ),
        ]

    def end(self) -> list[StreamEvent]:
        """The closing events once the vendor stream is exhausted.

        Raises:
            StreamEndedEarly: no `finishReason` (nor a blocked prompt) arrived.
        """
        if self._blocked is not None:
            finish = Finish(reason="content_filter", raw_reason=f"blocked:{self._blocked}")
            return [*self.usage_events(), finish]
        if self._finish_reason is None:
            raise StreamEndedEarly("the stream ended before a finishReason")
        reason = _finish_reason(self._finish_reason, has_calls=self._calls > 0)
        return [*self.usage_events(), Finish(reason=reason, raw_reason=self._finish_reason)]


def _enum_text(value: object) -> str:
    return str(getattr(value, "value", value))


def _finish_reason(raw: str, *, has_calls: bool) -> FinishReason:
    if raw == "STOP":
        # Gemini says STOP after a function call too.
        return "tool_calls" if has_calls else "stop"
    if raw == "MAX_TOKENS":
        return "length"
    if raw in _FILTERED:
        return "content_filter"
    # MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, MISSING_THOUGHT_SIGNATURE, LANGUAGE, OTHER...:
    # the turn ended without a usable answer; `raw_reason` keeps the detail.
    return "other"


# ------------------------------------------------------------------------------- errors


def _map_errors(exc: Exception, provider: str, secrets: tuple[str, ...] = ()) -> ProviderError:
    """The one place vendor exceptions become `ProviderError`s."""
    import httpx2
    from google.auth import exceptions as auth_errors
    from google.genai import errors

    match exc:
        case errors.APIError():
            details: object = getattr(exc, "details", None)
            retry_after = _retry_delay(details)
            response = getattr(exc, "response", None)
            headers = getattr(response, "headers", None)
            if retry_after is None and isinstance(headers, Mapping):
                retry_after = retry_after_seconds(cast("Mapping[str, str]", headers))
            # Annotated int, but None when neither the status nor the body said.
            code: object = getattr(exc, "code", None)
            status = code if isinstance(code, int) and code != 200 else None
            # A `google.rpc.ErrorInfo` reason is more precise than the status: an invalid key is
            # `400 INVALID_ARGUMENT` with reason `API_KEY_INVALID`.
            reason = _error_reason(details)
            return classify(
                provider=provider,
                status=status,
                message=str(exc.message or f"HTTP {code}"),
                code=reason or (str(exc.status) if exc.status else None),
                retry_after=retry_after,
                secrets=secrets,
            )
        case SdkKeyNotFound():
            return classify(
                provider=provider, status=None, message=str(exc), code="missing_credentials"
            )
        case StreamEndedEarly():
            return classify(
                provider=provider, status=None, message=str(exc), network=True, secrets=secrets
            )
        case httpx2.TransportError() | errors.ContinuationInterruptedError():
            message = with_request_url(f"{type(exc).__name__}: {exc}", exc)
            return classify(
                provider=provider, status=None, message=message, network=True, secrets=secrets
            )
        case auth_errors.TransportError():
            # The token endpoint was unreachable while refreshing Vertex credentials.
            message = f"fetching Google credentials failed: {type(exc).__name__}: {exc}"
            return classify(
                provider=provider, status=None, message=message, network=True, secrets=secrets
            )
        case auth_errors.DefaultCredentialsError() | auth_errors.RefreshError():
            # No status to go by: `unauthenticated` is the code Vertex itself uses for a request
            # without valid credentials.
            return classify(
                provider=provider,
                status=None,
                message=f"{_ADC_HINT}: {exc}",
                code="unauthenticated",
                secrets=secrets,
            )
        case errors.UnknownApiResponseError():
            # A frame that is not JSON: the vendor's fault, not ours; nothing says a retry helps.
            return classify(provider=provider, status=None, message="unparseable response frame")
        case _:
            # Anything else the SDK (or our translator) raised: reported, not raised, with its
            # type so that a bug is still recognisable in the message.
            message = f"{type(exc).__name__}: {exc}"
            return classify(provider=provider, status=None, message=message, secrets=secrets)


def _error_details(details: object) -> list[object]:
    """The `details` list of a Google error body (`{"error": {..., "details": [...]}}`)."""
    if not isinstance(details, dict):
        return []
    error = cast("dict[str, Any]", details).get("error", details)
    items = cast("dict[str, Any]", error).get("details") if isinstance(error, dict) else None
    return cast("list[object]", items) if isinstance(items, list) else []


def _error_reason(details: object) -> str | None:
    """`google.rpc.ErrorInfo.reason` (`API_KEY_INVALID`...) from an error body, if there is one."""
    for item in _error_details(details):
        if not isinstance(item, dict):
            continue
        info = cast("dict[str, Any]", item)
        reason = info.get("reason")
        if str(info.get("@type", "")).endswith("google.rpc.ErrorInfo") and isinstance(reason, str):
            return reason or None
    return None


def _retry_delay(details: object) -> float | None:
    """`google.rpc.RetryInfo.retryDelay` (`"17s"`) from an error body, if there is one."""
    for item in _error_details(details):
        if isinstance(item, dict):
            delay = cast("dict[str, Any]", item).get("retryDelay")
            if isinstance(delay, str):
                return parse_retry_after(delay)
    return None
