"""The providers earshot knows without settings: where each lives (base URL, wire API) and how it
authenticates (key variables, tokens), by models.dev id. `providers.registry` resolves them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from providers.model import WireApi


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSpec:
    """A built-in provider: where it lives and how it authenticates."""

    id: str
    """The models.dev provider id."""
    name: str
    api: WireApi
    base_url: str | None
    """None lets the vendor SDK use its default. `${VAR}` parts are filled from the environment."""
    env: tuple[str, ...] = ()
    """API-key variables, in order of preference: the first one set wins."""
    token_env: tuple[str, ...] = ()
    """Bearer-token variables (`ANTHROPIC_AUTH_TOKEN`), used only when no `env` key is set."""
    key_required: bool = True
    """False for local servers, which accept any key (a placeholder is sent)."""
    reasoning_field: str | None = None
    """For openai-chat hosts: the assistant-message field this host wants reasoning echoed back in
    on tool-call turns (`reasoning_content`). None: echo only where the catalog's `interleaved`
    says so for the model, because strict hosts (Groq, Cerebras) reject unknown fields."""
    base_url_env: tuple[str, ...] = ()
    """Variables that override `base_url` (e.g. `ANTHROPIC_BASE_URL`), first set wins."""
    required_env: tuple[str, ...] = ()
    """Non-key variables the provider cannot work without (an Azure resource, a GCP project)."""
    options: Mapping[str, object] = field(default_factory=lambda: {})
    """Extra adapter options copied onto the `Endpoint`."""
    local: bool = False
    """A server on this machine (ollama, vLLM...): no key, and maybe not running."""


def _spec(
    id: str,
    name: str,
    api: WireApi,
    base_url: str | None,
    env: tuple[str, ...],
    *,
    token_env: tuple[str, ...] = (),
    key_required: bool = True,
    reasoning_field: str | None = None,
    base_url_env: tuple[str, ...] = (),
    options: Mapping[str, object] | None = None,
    local: bool = False,
) -> ProviderSpec:
    required = tuple(re.findall(r"\$\{([A-Z0-9_]+)\}", base_url or ""))
    return ProviderSpec(
        id=id,
        name=name,
        api=api,
        base_url=base_url,
        env=env,
        token_env=token_env,
        key_required=key_required,
        reasoning_field=reasoning_field,
        base_url_env=base_url_env,
        required_env=required,
        options=options or {},
        local=local,
    )


# Base URLs and variables: providers.md section 5 and models.dev api.json (`api`, `env`). The
# OpenAI provider itself speaks Responses (reasoning replay needs it); compatible hosts speak chat.
BUILTIN_PROVIDERS: Final = (
    _spec(
        "anthropic",
        "Anthropic",
        "anthropic",
        None,
        ("ANTHROPIC_API_KEY",),
        # The SDK's own order: a key wins over a token when both are set.
        token_env=("ANTHROPIC_AUTH_TOKEN",),
        base_url_env=("ANTHROPIC_BASE_URL",),
    ),
    _spec(
        "openai",
        "OpenAI",
        "openai-responses",
        "https://api.openai.com/v1",
        ("OPENAI_API_KEY",),
        base_url_env=("OPENAI_BASE_URL",),
    ),
    _spec(
        "google",
        "Google (Gemini API)",
        "gemini",
        None,
        # google-genai itself prefers GOOGLE_API_KEY when both are set.
        ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"),
    ),
    _spec(
        "openrouter",
        "OpenRouter",
        "openai-chat",
        "https://openrouter.ai/api/v1",
        ("OPENROUTER_API_KEY",),
    ),
    _spec(
        "groq",
        "Groq",
        "openai-chat",
        "https://api.groq.com/openai/v1",
        ("GROQ_API_KEY",),
    ),
    _spec(
        "deepseek",
        "DeepSeek",
        "openai-chat",
        "https://api.deepseek.com",
        ("DEEPSEEK_API_KEY",),
        reasoning_field="reasoning_content",
    ),
    _spec(
        "xai",
        "xAI",
        "openai-chat",
        "https://api.x.ai/v1",
        ("XAI_API_KEY",),
    ),
    _spec("mistral", "Mistral", "openai-chat", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",)),
    _spec(
        "togetherai",
        "Together AI",
        "openai-chat",
        "https://api.together.xyz/v1",
        ("TOGETHER_API_KEY",),
    ),
    _spec(
        "fireworks-ai",
        "Fireworks AI",
        "openai-chat",
        "https://api.fireworks.ai/inference/v1",
        ("FIREWORKS_API_KEY",),
    ),
    _spec(
        "cerebras",
        "Cerebras",
        "openai-chat",
        "https://api.cerebras.ai/v1",
        ("CEREBRAS_API_KEY",),
    ),
    _spec(
        "moonshotai",
        "Moonshot AI (Kimi)",
        "openai-chat",
        "https://api.moonshot.ai/v1",
        ("MOONSHOT_API_KEY",),
        reasoning_field="reasoning_content",
    ),
    _spec(
        "zai",
        "Z.AI",
        "openai-chat",
        "https://api.z.ai/api/paas/v4",
        ("ZHIPU_API_KEY",),
        reasoning_field="reasoning_content",
    ),
    _spec(
        "zhipuai",
        "Zhipu AI",
        "openai-chat",
        "https://open.bigmodel.cn/api/paas/v4",
        ("ZHIPU_API_KEY",),
        reasoning_field="reasoning_content",
    ),
    _spec(
        "minimax",
        "MiniMax",
        "anthropic",
        # models.dev lists .../anthropic/v1; the Anthropic SDK appends /v1/messages itself.
        "https://api.minimax.io/anthropic",
        ("MINIMAX_API_KEY",),
    ),
    _spec(
        "alibaba",
        "Alibaba (DashScope)",
        "openai-chat",
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        ("DASHSCOPE_API_KEY",),
    ),
    _spec(
        "deepinfra",
        "Deep Infra",
        "openai-chat",
        "https://api.deepinfra.com/v1/openai",
        ("DEEPINFRA_API_KEY",),
    ),
    _spec(
        "nebius",
        "Nebius Token Factory",
        "openai-chat",
        "https://api.tokenfactory.nebius.com/v1",
        ("NEBIUS_API_KEY",),
    ),
    _spec(
        "huggingface",
        "Hugging Face",
        "openai-chat",
        "https://router.huggingface.co/v1",
        ("HF_TOKEN",),
    ),
    _spec(
        "github-models",
        "GitHub Models",
        "openai-chat",
        "https://models.github.ai/inference",
        ("GITHUB_TOKEN",),
    ),
    _spec(
        "requesty",
        "Requesty",
        "openai-chat",
        "https://router.requesty.ai/v1",
        ("REQUESTY_API_KEY",),
    ),
    _spec(
        "ollama-cloud",
        "Ollama Cloud",
        "openai-chat",
        "https://ollama.com/v1",
        ("OLLAMA_API_KEY",),
    ),
    _spec(
        "azure",
        "Azure OpenAI",
        "openai-responses",
        "https://${AZURE_RESOURCE_NAME}.openai.azure.com/openai/v1",
        ("AZURE_API_KEY",),
    ),
    _spec(
        "google-vertex",
        "Google Vertex AI",
        "gemini",
        None,
        # Vertex authenticates with Application Default Credentials for a project, or with an
        # express-mode API key (the variable @ai-sdk/google-vertex reads). Either one will do.
        ("GOOGLE_VERTEX_API_KEY",),
        key_required=False,
        options={"vertexai": True},
    ),
    _spec(
        "ollama",
        "Ollama (local)",
        "openai-chat",
        "http://localhost:11434/v1",
        ("OLLAMA_API_KEY",),
        key_required=False,
        local=True,
    ),
    _spec(
        "lmstudio",
        "LM Studio (local)",
        "openai-chat",
        "http://127.0.0.1:1234/v1",
        ("LMSTUDIO_API_KEY",),
        key_required=False,
        local=True,
    ),
    _spec(
        "vllm",
        "vLLM (local)",
        "openai-chat",
        "http://localhost:8000/v1",
        ("VLLM_API_KEY",),
        key_required=False,
        local=True,
    ),
    _spec(
        "llama.cpp",
        "llama.cpp server (local)",
        "openai-chat",
        "http://127.0.0.1:8080/v1",
        ("LLAMA_API_KEY",),
        key_required=False,
        local=True,
    ),
)
