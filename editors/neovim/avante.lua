-- avante.nvim: earshot as an ACP provider.
require("avante").setup({
  provider = "earshot",
  acp_providers = {
    ["earshot"] = {
      command = "earshot",
      args = { "--stdio" },
      env = {
        ANTHROPIC_API_KEY = os.getenv("ANTHROPIC_API_KEY"),
      },
    },
  },
})
