-- CodeCompanion: an ACP adapter for earshot, built on the minimal built-in "goose" adapter.
require("codecompanion").setup({
  adapters = {
    acp = {
      earshot = function()
        return require("codecompanion.adapters").extend("goose", {
          name = "earshot",
          formatted_name = "earshot",
          commands = {
            default = { "earshot", "--stdio" },
          },
          defaults = {
            mcpServers = {},
            timeout = 20000,
          },
          env = {},
        })
      end,
    },
  },
  interactions = {
    chat = { adapter = "earshot" },
  },
})
