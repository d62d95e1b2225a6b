;;; earshot-agent-shell.el --- earshot as an agent-shell agent -*- lexical-binding: t; -*-

;; Requires agent-shell (https://github.com/xenodium/agent-shell) and its acp.el.

;;; Commentary:

;; Adds earshot to agent-shell's agents: `M-x agent-shell' then offers "earshot".  Put this
;; file's folder on `load-path' and `(require 'earshot-agent-shell)' after agent-shell loads.
;; The file and feature are named `earshot-agent-shell', not `agent-shell': a file of the
;; package's own name would shadow it ("Recursive `require' for feature `agent-shell'").
;;
;; It follows agent-shell's convention for agents: a maker function,
;; `earshot-agent-shell-make-agent-config', returns the configuration, and the maker itself
;; is what goes into `agent-shell-agent-configs' (agent-shell calls makers whenever it reads
;; the list, so a changed setting applies to the next shell).  When that variable is a
;; function (a filter over the default makers, as agent-shell's documentation suggests), it
;; is wrapped so that earshot is offered too.  agent-shell versions from before makers took
;; configurations only; they are given the configuration itself.

;;; Code:

(require 'cl-lib)
(require 'agent-shell)

(declare-function agent-shell-make-agent-config "agent-shell")
(declare-function agent-shell--make-acp-client "agent-shell")

(defgroup earshot-agent-shell nil
  "The earshot coding agent in agent-shell."
  :group 'agent-shell)

(defcustom earshot-agent-shell-command '("earshot" "--stdio")
  "The command that starts earshot as an ACP agent, then its arguments.
If Emacs does not see your shell's PATH, use the absolute path printed by
`command -v earshot' (e.g. \"~/.local/bin/earshot\" after `./scripts/install')."
  :type '(repeat string)
  :group 'earshot-agent-shell)

(defcustom earshot-agent-shell-environment nil
  "Extra environment for earshot, a list of \"NAME=VALUE\" strings.
`agent-shell-make-environment-variables' makes one.  earshot reads model keys
such as ANTHROPIC_API_KEY from its environment, which agent-shell passes on;
this adds to it."
  :type '(repeat string)
  :group 'earshot-agent-shell)

(cl-defun earshot-agent-shell-make-client (&key buffer)
  "Return the ACP client that starts earshot, with BUFFER as its context."
  (agent-shell--make-acp-client
   :command (car earshot-agent-shell-command)
   :command-params (cdr earshot-agent-shell-command)
   :environment-variables earshot-agent-shell-environment
   :context-buffer buffer))

(defun earshot-agent-shell-make-agent-config ()
  "Return the agent-shell configuration that starts earshot."
  (agent-shell-make-agent-config
   :identifier 'earshot
   :mode-line-name "earshot"
   :buffer-name "earshot"
   :shell-prompt "earshot> "
   :shell-prompt-regexp "earshot> "
   :client-maker (lambda (buffer) (earshot-agent-shell-make-client :buffer buffer))
   :install-instructions
   "Install earshot from a checkout: `./scripts/install' (or `pipx install .')."))

(defun earshot-agent-shell--with-earshot (configs)
  "CONFIGS, with earshot's maker at the end unless it is there already."
  (if (memq #'earshot-agent-shell-make-agent-config configs)
      configs
    (append configs (list #'earshot-agent-shell-make-agent-config))))

(defun earshot-agent-shell-register ()
  "Add earshot to `agent-shell-agent-configs' (see the Commentary)."
  (cond
   ((functionp agent-shell-agent-configs)
    (let ((given agent-shell-agent-configs))
      (setq agent-shell-agent-configs
            (lambda () (earshot-agent-shell--with-earshot (funcall given))))))
   ((fboundp 'agent-shell--resolved-agent-configs)
    (setq agent-shell-agent-configs
          (earshot-agent-shell--with-earshot agent-shell-agent-configs)))
   (t
    (add-to-list 'agent-shell-agent-configs (earshot-agent-shell-make-agent-config) t))))

(earshot-agent-shell-register)

(provide 'earshot-agent-shell)

;;; earshot-agent-shell.el ends here
