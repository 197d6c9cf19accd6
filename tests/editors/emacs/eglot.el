;;; eglot.el --- the eglot client of the Emacs tests  -*- lexical-binding: t -*-

;; Plain eglot, configured the way the README's recipe says (the server
;; program with its initializationOptions, edits applied without a y/n prompt
;; each), and the client's side of the T- helpers (see prelude.el): how a
;; command is sent, a file opened, a shown message found, a code action
;; picked, the buffer's changes known to be sent, the log kept, the server
;; shut down.

(require 'eglot)

;;; The recipe.
(setq eglot-server-programs
      `((python-mode . (,@(append (plist-get T-spec :command) nil)
                        :initializationOptions
                        ,(plist-get T-spec :initializationOptions)))))
(setq eglot-confirm-server-initiated-edits nil)
(add-hook 'python-mode-hook #'eglot-ensure)

(defvar T-server nil "The eglot server of the workspace, once connected.")

(defun T-command (name &optional args)
  "Run workspace/executeCommand NAME with ARGS (a plist) as eglot does."
  (eglot-execute-command T-server name (vector (or args eglot--{}))))

(defun T-open (relative)
  "Steps: visit RELATIVE with C-x C-f, as the user does, and wait for eglot.
\(`eglot-ensure' connects from `post-command-hook': a real command is needed.)"
  (list (lambda () (T-keys (concat "\C-x\C-f" (T-path relative) "\r")))
        (T-until (format "eglot to manage %s" relative)
                 (lambda ()
                   (when-let ((buffer (find-buffer-visiting (T-path relative))))
                    (with-current-buffer buffer
                     (when (and eglot--managed-mode (eglot-current-server))
                       (setq T-server (eglot-current-server)))))))))

(defconst T--shown-marker "[eglot] Server reports (type=3): "
  "How eglot logs a window/showMessage of type Info in *Messages*.")

(defun T-shown (&optional text)
  "The Info messages the server showed (as eglot logs them in *Messages*).
With TEXT, the first one containing it, or nil."
  (let ((all (cdr (split-string (T-messages) (regexp-quote T--shown-marker)))))
    (setq all (mapcar (lambda (part) (car (split-string part "\n\\[eglot\\] "))) all))
    (if text (seq-find (lambda (part) (string-search text part)) all) all)))

(defun T-code-action (title &optional record)
  "Steps: M-x eglot-code-actions, then pick TITLE, as the user would."
  (list (lambda () (T-keys "\exeglot-code-actions\r"))
        (T-answer "Pick an action" (concat title "\r") record)))

(defun T-synced (relative)
  "A step: wait until eglot has sent RELATIVE's pending changes (its idle timer)."
  (T-until (format "eglot to send the changes of %s" relative)
           (lambda ()
             (with-current-buffer (find-buffer-visiting (T-path relative))
               (null eglot--recent-changes)))))

(defconst T-client-log-regexp "EGLOT"
  "The names of eglot's events buffers.")

(defun T-client-shutdown ()
  (eglot-shutdown-all))
