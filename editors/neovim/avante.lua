-- avante.nvim: earshot as an ACP provider.
--
-- avante starts an ACP agent with `PATH` and the entry's `env` only, not Neovim's environment
-- (lua/avante/libs/acp_client.lua, `_create_stdio_transport`). So this entry forwards what
-- earshot reads: HOME and the XDG directories (its settings and sessions live there), the temp
-- dir, locale, proxy and CA settings, earshot's own variables, and every provider key variable
-- earshot knows. A variable that is not set is left out (os.getenv gives nil). A key saved with
-- `earshot login` lives in earshot's settings and needs only HOME (or XDG_CONFIG_HOME).
local forwarded = {
  "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE",
  "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
  "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
  "SSL_CERT_FILE", "SSL_CERT_DIR",
  "EARSHOT_MODEL", "EARSHOT_LOG_FILE", "EARSHOT_LOG_LEVEL",
  -- provider keys (and Azure's resource name), as earshot's provider table names them
  "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "GOOGLE_API_KEY",
  "GEMINI_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY",
  "DEEPSEEK_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_API_KEY",
  "CEREBRAS_API_KEY", "MOONSHOT_API_KEY", "ZHIPU_API_KEY", "MINIMAX_API_KEY", "DASHSCOPE_API_KEY",
  "DEEPINFRA_API_KEY", "NEBIUS_API_KEY", "HF_TOKEN", "GITHUB_TOKEN", "REQUESTY_API_KEY",
  "OLLAMA_API_KEY", "AZURE_API_KEY", "GOOGLE_VERTEX_API_KEY", "LMSTUDIO_API_KEY", "VLLM_API_KEY",
  "LLAMA_API_KEY", "AZURE_RESOURCE_NAME",
}
local env = {}
for _, name in ipairs(forwarded) do
  env[name] = os.getenv(name)
end

require("avante").setup({
  provider = "earshot",
  acp_providers = {
    ["earshot"] = {
      command = "earshot",
      args = { "--stdio" },
      env = env,
    },
  },
})
