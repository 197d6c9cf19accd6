;;; lsp-mode.el --- the lsp-mode client of the Emacs tests  -*- lexical-binding: t -*-

;; Plain lsp-mode (Debian's elpa-lsp-mode 8.0), configured the way the
;; README's recipe says (a `make-lsp-client' entry with the server program
;; and its initializationOptions), and the client's side of the T- helpers
;; (see prelude.el). lsp-mode's `workspace/executeCommand' is synchronous
;; and gives up after `lsp-response-timeout' (10 s): the server must answer
;; it at once. Beside the recipe, only what a test needs: no other client
;; packages loaded, the project root taken without asking, the session file
;; and the I/O log kept in the test's folder.

;; A user's Emacs activates the installed packages (their autoloads:
;; lsp-mode's mode-line and header-line modes) at startup; `emacs -q' does not.
(load "lsp-mode-autoloads" nil t)
(setq native-comp-deferred-compilation nil  ; test only: no background compiling
      native-comp-async-report-warnings-errors nil)
(require 'lsp-mode)

;;; The recipe.
(setq lsp-client-packages nil          ; test only: no other servers' clients
      lsp-enabled-clients '(rhema)
      lsp-auto-guess-root t             ; test only: no "Import project root?" prompt
      lsp-session-file (expand-file-name "lsp-session" T-dir)
      lsp-enable-snippet nil
      lsp-print-io t                    ; test only: the I/O log goes to events.log
      lsp-keep-workspace-alive nil
      ;; test only: Debian's native compilation of seq logs to *Warnings*,
      ;; which the tests must find empty of anything lsp-mode says.
      native-comp-async-report-warnings-errors nil)

(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection (append (plist-get T-spec :command) nil))
  :major-modes '(python-mode)
  :server-id 'rhema
  :add-on? t
  :initialization-options (plist-get T-spec :initializationOptions)))

(add-hook 'python-mode-hook #'lsp-deferred)

(defun rhema-ask (prompt)
  "Ask the agent PROMPT; the answer comes as a message."
  (interactive "sAsk Rhema: ")
  (with-lsp-workspace (lsp-find-workspace 'rhema nil)
    (lsp-workspace-command-execute "rhema.turn" (vector (list :prompt prompt)))))

;;; The client's side of the helpers.
(defvar T-lsp-buffer nil "A buffer lsp-mode manages, once connected.")

(defun T-command (name &optional args)
  "Run workspace/executeCommand NAME with ARGS (a plist) as lsp-mode does
\(synchronously, within `lsp-response-timeout'); the result as a plist."
  (with-current-buffer T-lsp-buffer
    (T--plist (lsp-workspace-command-execute (symbol-name name)
                                             (vector (or args (make-hash-table)))))))

(defun T--plist (value)
  "VALUE with lsp-mode's hash tables made plists with keyword keys."
  (cond ((hash-table-p value)
         (let (plist)
           (maphash (lambda (key item)
                      (setq plist (append plist (list (intern (concat ":" key))
                                                      (T--plist item)))))
                    value)
           plist))
        ((vectorp value) (vconcat (mapcar #'T--plist value)))
        (t value)))

(defun T-open (relative)
  "Steps: visit RELATIVE with C-x C-f, as the user does, and wait for
lsp-mode to have initialized its workspace."
  (list (lambda () (T-keys (concat "\C-x\C-f" (T-path relative) "\r")))
        (T-until (format "lsp-mode to manage %s" relative)
                 (lambda ()
                   (when-let ((buffer (find-buffer-visiting (T-path relative))))
                     (with-current-buffer buffer
                       (when (and (bound-and-true-p lsp-mode)
                                  (lsp-workspaces)
                                  (eq (lsp--workspace-status (car (lsp-workspaces)))
                                      'initialized))
                         (setq T-lsp-buffer buffer))))))))

(defconst T--shown-marker "LSP :: "
  "How lsp-mode logs a window/showMessage in *Messages*.")

(defun T-shown (&optional text)
  "The messages the server showed (the `LSP :: Rhema: ' lines of *Messages*).
With TEXT, the first one containing it, or nil."
  (let ((all (seq-filter (lambda (line) (string-prefix-p (concat T--shown-marker "Rhema: ") line))
                         (split-string (T-messages) "\n"))))
    (setq all (mapcar (lambda (line) (string-remove-prefix T--shown-marker line)) all))
    (if text (seq-find (lambda (line) (string-search text line)) all) all)))

(defun T-code-action (title &optional record)
  "Steps: M-x lsp-execute-code-action, then pick TITLE, as the user would."
  (list (lambda () (T-keys "\exlsp-execute-code-action\r"))
        (T-answer "Select code action" (concat title "\r") record)))

(defun T-answered (method)
  "Whether lsp-mode has had an answer to a METHOD request (its I/O log,
`lsp-print-io', says it received one)."
  (let ((needle (format "Received response '%s - (" method)))
    (seq-some (lambda (buffer)
                (and (string-match-p T-client-log-regexp (buffer-name buffer))
                     (with-current-buffer buffer
                       (save-excursion
                         (goto-char (point-min))
                         (search-forward needle nil t)))))
              (buffer-list))))

(defun T-synced (relative)
  "A step: wait until lsp-mode has sent RELATIVE's pending changes (it
sends incremental changes at once; full ones after an idle delay)."
  (T-until (format "lsp-mode to send the changes of %s" relative)
           (lambda ()
             (with-current-buffer (find-buffer-visiting (T-path relative))
               (null lsp--delayed-requests)))))

(defun T-warnings ()
  "The *Warnings* buffer's text, or nil when there is none; Emacs's own
native-compilation warnings (\"Warning (comp): ...\", from compiling
Debian's seq in the background) are not lsp-mode's and are left out."
  (when-let ((buffer (get-buffer "*Warnings*")))
    (with-current-buffer buffer
      (let ((lines (seq-remove
                    (lambda (line)
                      (or (string-match-p "\\`Warning (comp): " line)
                          (string-blank-p line)))
                    (split-string (buffer-substring-no-properties (point-min) (point-max))
                                  "\n"))))
        (and lines (string-join lines "\n"))))))

(defconst T-client-log-regexp "lsp-log"
  "The names of lsp-mode's log buffers (*lsp-log*, and the I/O log).")

(defun T-client-shutdown ()
  (let ((lsp-restart 'ignore))
    (mapc #'lsp-workspace-shutdown (lsp--session-workspaces (lsp-session)))))
