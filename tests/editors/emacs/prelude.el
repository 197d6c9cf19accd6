;;; prelude.el --- loaded before every Emacs test body  -*- lexical-binding: t -*-

;; The T- helpers the test bodies use, whichever LSP client runs: the
;; client's file (eglot.el, lsp-mode.el), loaded next, configures the client
;; as the README's recipe says and supplies the client's side of the helpers
;; (T-command, T-open, T-shown, T-code-action, T-synced,
;; T-client-log-regexp, T-client-shutdown). No rhema code: everything the
;; server does reaches Emacs through the client's own handlers.
;;
;; A body is (T-run STEP...). A step is a function, run from a timer with the
;; command loop in between (so idle timers and key presses behave as for a
;; user); a function may return (:then STEP...) to run more steps next.
;; (T-until WHAT COND [SECONDS]) is a step that waits until COND holds.
;; When the steps end (or one fails), T-result goes to result.json, the
;; client's log buffers (every message both ways) to events.log, and Emacs
;; exits. Each step begun is noted in steps.log, for a hung Emacs's report.

(require 'json)
(require 'python)
(require 'subr-x)

(defvar T-spec
  (let ((json-object-type 'plist)
        (json-array-type 'vector)
        (json-key-type 'keyword))
    (json-read-from-string (getenv "RHEMA_TEST_SPEC"))))

(defvar T-workspace (file-name-as-directory (plist-get T-spec :workspace)))
(defvar T-dir (file-name-as-directory (plist-get T-spec :dir)))

;;; Results.
(defvar T-result nil "An alist: what the body found, written as JSON at the end.")

(defun T-set (key value)
  "Record VALUE under KEY (a string) in the result."
  (setq T-result (cons (cons key value) (assoc-delete-all key T-result))))

(defun T-get (key)
  (cdr (assoc key T-result)))

;;; Helpers.
(defun T-release-model (origin)
  "Let the fake model at ORIGIN go on with an answer it holds (a reply
scripted with `hold'): the test paces the model by what it has seen."
  (require 'url)
  (let ((url-request-method "GET")
        (url-proxy-services nil))
    (kill-buffer (url-retrieve-synchronously (concat origin "/release") t t 10))))

(defun T-path (relative)
  (expand-file-name relative T-workspace))

(defun T-buffer-text (relative)
  (with-current-buffer (find-buffer-visiting (T-path relative))
    (buffer-substring-no-properties (point-min) (point-max))))

(defun T-messages ()
  (with-current-buffer (messages-buffer)
    (buffer-substring-no-properties (point-min) (point-max))))

(defun T-message-matching (regexp)
  "The first line of *Messages* matching REGEXP, or nil."
  (with-current-buffer (messages-buffer)
    (save-excursion
      (goto-char (point-min))
      (when (re-search-forward regexp nil t)
        (buffer-substring-no-properties (line-beginning-position) (line-end-position))))))

(defvar T--keys-count 0)

(defun T-keys (keys)
  "Type KEYS (a string of raw terminal bytes) on the terminal, as the user would.
The harness writes them to the pseudo-terminal; they arrive as real input."
  (setq T--keys-count (1+ T--keys-count))
  (let* ((file (expand-file-name (format "keys/%04d" T--keys-count) T-dir))
         (partial (concat file ".tmp")))
    (let ((coding-system-for-write 'no-conversion))
      (write-region keys nil partial nil 'silent))
    (rename-file partial file)))

(defun T-until (what cond &optional seconds)
  "A step: wait (up to SECONDS, default 30) until COND returns non-nil."
  (list :until what cond (or seconds 30)))

;;; What the user sees and does.
(defun T-prompt ()
  "The prompt of the active minibuffer, or nil."
  (when-let ((window (active-minibuffer-window)))
    (with-current-buffer (window-buffer window) (minibuffer-prompt))))

(defun T-choices ()
  "What the active minibuffer offers: prompt, choices in order and, for
a code-action menu whose table holds them, the actions themselves. (eglot's
prompts make the first choice the default.)"
  (with-current-buffer (window-buffer (active-minibuffer-window))
    (let ((table minibuffer-completion-table))
      `(("prompt" . ,(minibuffer-prompt))
        ("choices" . ,(vconcat (all-completions "" table)))
        ("actions" . ,(if (and (consp table) (consp (car table)))
                          (vconcat (mapcar #'cdr table))
                        []))))))

(defun T-answer (regexp keys &optional record)
  "Steps: wait for a minibuffer prompt matching REGEXP, record what it offers
under RECORD, then type KEYS."
  (list (T-until (format "a prompt matching %S" regexp)
                 (lambda () (when-let ((prompt (T-prompt))) (string-match-p regexp prompt))))
        (lambda ()
          (when record (T-set record (T-choices)))
          (T-keys keys))))

(defun T-select-lines (relative first last)
  "Select lines FIRST to LAST (1-based, whole lines with their newlines) of RELATIVE."
  (switch-to-buffer (find-buffer-visiting (T-path relative)))
  (goto-char (point-min))
  (forward-line (1- first))
  (let ((beg (point)))
    (forward-line (1+ (- last first)))
    (push-mark beg t t)))

(defun T-open-session (session)
  "The session's history, through rhema.openSession."
  (T-command 'rhema.openSession `(:session ,session)))

;;; The runner.
(defvar T--steps nil)

(defun T-run (&rest steps)
  (setq T--steps (T--flatten steps))
  (run-with-timer 0.1 nil #'T--next))

(defun T--flatten (steps)
  (cl-loop for step in steps
           if (or (functionp step) (eq (car-safe step) :until)) collect step
           else append (T--flatten step)))

(defvar T--step-count 0)

(defun T--trace (what)
  "Append WHAT to steps.log (a line per step begun, with the time), so a hung
Emacs says which step it was in."
  (let ((coding-system-for-write 'utf-8))
    (write-region (format "%.3f %s\n" (float-time) what) nil
                  (expand-file-name "steps.log" T-dir) t 'silent)))

(defun T--next ()
  (if (null T--steps)
      (T--finish nil)
    (let ((step (pop T--steps)))
      (setq T--step-count (1+ T--step-count))
      (T--trace (if (eq (car-safe step) :until)
                    (format "step %d: waiting for %s" T--step-count (nth 1 step))
                  (format "step %d" T--step-count)))
      (condition-case err
          (if (eq (car-safe step) :until)
              (T--poll (nth 1 step) (nth 2 step) (+ (float-time) (nth 3 step)))
            (let ((more (funcall step)))
              (when (eq (car-safe more) :then)
                (setq T--steps (append (T--flatten (cdr more)) T--steps)))
              (run-with-timer 0 nil #'T--next)))
        ((error quit) (T--finish (format "step failed: %S" err)))))))

(defun T--poll (what cond deadline)
  (condition-case err
      (cond ((funcall cond) (T--next))
            ((> (float-time) deadline)
             (T--finish (format "timed out waiting for %s" what)))
            (t (run-with-timer 0.05 nil #'T--poll what cond deadline)))
    ((error quit) (T--finish (format "waiting for %s: %S" what err)))))

(defun T--finish (failure)
  (when failure (T-set "error" failure))
  (T-set "messages" (T-messages))
  ;; The client's log buffers (every message both ways, the server's stderr).
  (with-temp-buffer
    (dolist (buffer (buffer-list))
      (when (string-match-p T-client-log-regexp (buffer-name buffer))
        (insert "==== " (buffer-name buffer) "\n")
        (insert-buffer-substring buffer)))
    (let ((coding-system-for-write 'utf-8))
      (write-region nil nil (expand-file-name "events.log" T-dir) nil 'silent)))
  (let ((coding-system-for-write 'utf-8))
    (with-temp-file (expand-file-name "result.json" T-dir)
      (insert (json-encode T-result))))
  (T--trace "result written; shutting the client down")
  (ignore-errors (T-client-shutdown))
  (T--trace "exiting")
  (kill-emacs 0))
