;;; earshot-agent-shell.el --- earshot as an agent-shell agent -*- lexical-binding: t; -*-

;; Requires agent-shell (https://github.com/xenodium/agent-shell) and its acp.el.

;;; Commentary:

;; Adds earshot to agent-shell's agents: `M-x agent-shell' then offers "earshot".  Put this
;; file's folder on `load-path' and `(require 'earshot-agent-shell)' after agent-shell loads.
;; The file and feature are named `earshot-agent-shell', not `agent-shell': a file of the
;; package's own name would shadow it ("Recursive `require' for feature `agent-shell'").

;;; Code:

(require 'agent-shell)

(defgroup earshot-agent-shell nil
  "The earshot coding agent in agent-shell."
  :group 'agent-shell)

(defcustom earshot-agent-shell-command '("earshot" "--stdio")
  "The command that starts earshot as an ACP agent, then its arguments.
If Emacs does not see your shell's PATH, use the absolute path printed by
`command -v earshot' (e.g. \"~/.local/bin/earshot\" after `pipx install .')."
  :type '(repeat string)
  :group 'earshot-agent-shell)

(defcustom earshot-agent-shell-environment nil
  "Extra environment for earshot, e.g. from `agent-shell-make-environment-variables'.
earshot reads model keys such as ANTHROPIC_API_KEY from its environment."
  :type '(repeat string)
  :group 'earshot-agent-shell)

(defun earshot-agent-shell-make-agent-config ()
  "Return the agent-shell configuration that starts earshot."
  (agent-shell-make-agent-config
   :identifier 'earshot
   :mode-line-name "earshot"
   :buffer-name "earshot"
   :shell-prompt "earshot> "
   :shell-prompt-regexp "earshot> "
   :client-maker (lambda (buffer)
                   (agent-shell--make-acp-client
                    :command (car earshot-agent-shell-command)
                    :command-params (cdr earshot-agent-shell-command)
                    :environment-variables earshot-agent-shell-environment
                    :context-buffer buffer))
   :install-instructions
   "Install earshot from a checkout: `pipx install .' or `uv tool install .'."))

;; A configuration alist is what every agent-shell version accepts in this list (newer ones
;; also take functions); a list the user replaced with a function is left alone.
(unless (functionp agent-shell-agent-configs)
  (add-to-list 'agent-shell-agent-configs (earshot-agent-shell-make-agent-config) t))

(provide 'earshot-agent-shell)

;;; earshot-agent-shell.el ends here
