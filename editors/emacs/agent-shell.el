;;; agent-shell.el --- earshot for agent-shell -*- lexical-binding: t; -*-
;; Requires agent-shell (xenodium/agent-shell) and acp.el.
(require 'agent-shell)

(add-to-list 'agent-shell-agent-configs
             (agent-shell-make-agent-config
              :identifier 'earshot
              :mode-line-name "earshot"
              :buffer-name "earshot"
              :shell-prompt "earshot> "
              :shell-prompt-regexp "earshot> "
              :client-maker (lambda (buffer)
                              (agent-shell--make-acp-client
                               :command "earshot"
                               :command-params '("--stdio")
                               :environment-variables (agent-shell-make-environment-variables)
                               :context-buffer buffer))))
