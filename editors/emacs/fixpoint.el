;;; fixpoint.el --- Use fixpoint from Emacs through eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1") (eglot "1.9"))
;; Keywords: tools, languages
;; URL: https://github.com/fixpoint-dev/fixpoint

;;; Commentary:

;; fixpoint turns a goal into a verified edit: it plans, edits, runs the
;; tests in a sandbox, reflects and retries, and only a verified result is
;; applied (through workspace/applyEdit, so it lands in your buffers and
;; undo history).  This file registers `fixpoint serve' with eglot and adds
;; commands for the server's workspace commands:
;;
;;   (require 'fixpoint)
;;   (fixpoint-eglot-setup)          ; then M-x eglot in a project buffer
;;
;;   M-x fixpoint-solve-goal   fixpoint.solveGoal {goal, uri, range}
;;   M-x fixpoint-fix-tests    fixpoint.fixTests {uri}
;;   M-x fixpoint-run-tests    fixpoint.runTests {uri}
;;   M-x fixpoint-cancel       fixpoint.cancel
;;
;; eglot runs one server per buffer, so in the modes of
;; `fixpoint-major-modes' fixpoint replaces the usual server (gopls,
;; pylsp...).  Progress ("Iteration 2/6 · running tests · 3 failed") is
;; echoed and kept in `fixpoint-status' for the mode line.  The API key comes
;; from the environment (FIXPOINT_API_KEY), never from this file.

;;; Code:

(require 'eglot)
(require 'cl-lib)

(defgroup fixpoint nil
  "Verified edits from a goal, through `fixpoint serve'."
  :group 'tools
  :prefix "fixpoint-")

(defcustom fixpoint-program '("fixpoint" "serve")
  "The server command and its arguments."
  :type '(repeat string))

(defcustom fixpoint-major-modes
  '(go-mode go-ts-mode python-mode python-ts-mode js-mode js-ts-mode
    typescript-mode typescript-ts-mode)
  "Major modes in which eglot starts `fixpoint serve'."
  :type '(repeat symbol))

(defcustom fixpoint-settings nil
  "Server settings as a plist, e.g. (:model \"gpt-4o\" :maxIterations 6).
Sent as initializationOptions and as the \"fixpoint\" section of
workspace/configuration.  Keys: :model :baseUrl :sandbox :image
:maxIterations :testCmd :dataDir :memory :runtime :allowTestEdits
:temperature.  nil means the server's own layers (environment,
.fixpoint.toml, defaults)."
  :type 'plist)

(defvar fixpoint-status ""
  "The last progress of a fixpoint run, for the mode line.
Empty when idle.  Add it with
  (add-to-list \\='mode-line-misc-info \\='(:eval fixpoint-status))")

(defvar fixpoint-goal-history nil
  "Goals given to `fixpoint-solve-goal'.")

(defclass eglot-fixpoint (eglot-lsp-server) ()
  :documentation "The fixpoint language server, `fixpoint serve'.")

(cl-defmethod eglot-initialization-options ((_server eglot-fixpoint))
  "Send `fixpoint-settings' as initializationOptions."
  (or fixpoint-settings eglot--{}))

(cl-defmethod eglot-handle-notification
  ((_server eglot-fixpoint) (_method (eql $/progress)) &key token value)
  "Show fixpoint's work-done progress VALUE for TOKEN."
  (ignore token)
  (let ((kind (plist-get value :kind))
        (title (plist-get value :title))
        (msg (plist-get value :message)))
    (when title
      (setq title (replace-regexp-in-string "\\`fixpoint: *" "" title)))
    (setq fixpoint-status
          (pcase kind
            ("begin" (format "fixpoint: %s" (or title "running")))
            ("report" (format "fixpoint %s" (or msg "")))
            (_ "")))
    (force-mode-line-update t)
    (message "fixpoint: %s" (or msg title kind))))

;;;###autoload
(defun fixpoint-eglot-setup ()
  "Make eglot start `fixpoint serve' in `fixpoint-major-modes'.
Also adds the \"fixpoint\" section to the default
`eglot-workspace-configuration'."
  (interactive)
  (add-to-list 'eglot-server-programs
               (cons fixpoint-major-modes (cons 'eglot-fixpoint fixpoint-program)))
  (unless (plist-member (default-value 'eglot-workspace-configuration) :fixpoint)
    (setq-default eglot-workspace-configuration
                  (append (list :fixpoint (or fixpoint-settings eglot--{}))
                          (default-value 'eglot-workspace-configuration)))))

(defun fixpoint--uri ()
  "The current buffer's file as an LSP URI, or nil."
  (when buffer-file-name
    ;; eglot 1.9 calls it eglot--path-to-uri; later versions eglot-path-to-uri.
    (funcall (if (fboundp 'eglot-path-to-uri) 'eglot-path-to-uri 'eglot--path-to-uri)
             buffer-file-name)))

(defun fixpoint--position (pos)
  "POS as an LSP position (line, UTF-16 column via eglot)."
  (save-excursion
    (goto-char pos)
    (list :line (1- (line-number-at-pos)) :character (funcall eglot-current-column-function))))

(defun fixpoint--execute (command arg)
  "Ask the current buffer's fixpoint server to run COMMAND with ARG.
ARG is a plist, or nil for no arguments.  The request is asynchronous:
the server replies at once and reports the run through $/progress.  (A
synchronous request, as `eglot-execute-command' makes, also loses
messages on Emacs 28: jsonrpc leaves whatever arrived in the same read
as the reply unparsed until the server writes again, and the server's
window/workDoneProgress/create then waits forever.)"
  (let ((server (eglot-current-server)))
    (unless (and server (cl-typep server 'eglot-fixpoint))
      (user-error "No fixpoint server for this buffer: run M-x fixpoint-eglot-setup, then M-x eglot"))
    (jsonrpc-async-request
     server :workspace/executeCommand
     (list :command command :arguments (if arg (vector arg) []))
     :success-fn #'ignore
     :error-fn (lambda (err) (message "fixpoint: %s" (plist-get err :message))))
    nil))

(defun fixpoint--uri-arg ()
  "A {uri} argument for the current buffer."
  (let ((uri (fixpoint--uri)))
    (if uri (list :uri uri) eglot--{})))

;;;###autoload
(defun fixpoint-solve-goal (goal)
  "Ask fixpoint to solve GOAL; an active region is its focus."
  (interactive (list (read-string "fixpoint goal: " nil 'fixpoint-goal-history)))
  (when (string-empty-p (string-trim goal))
    (user-error "Describe the change you want, e.g. \"make TestParse pass\""))
  (let ((arg (list :goal (string-trim goal)))
        (uri (fixpoint--uri)))
    (when uri (setq arg (append arg (list :uri uri))))
    (when (use-region-p)
      (setq arg (append arg (list :range (list :start (fixpoint--position (region-beginning))
                                               :end (fixpoint--position (region-end))))))
      (deactivate-mark))
    (fixpoint--execute "fixpoint.solveGoal" arg)))

;;;###autoload
(defun fixpoint-fix-tests ()
  "Run the tests and fix the code until they pass."
  (interactive)
  (fixpoint--execute "fixpoint.fixTests" (fixpoint--uri-arg)))

;;;###autoload
(defun fixpoint-run-tests ()
  "Run the tests in the sandbox; failures become diagnostics."
  (interactive)
  (fixpoint--execute "fixpoint.runTests" (fixpoint--uri-arg)))

;;;###autoload
(defun fixpoint-cancel ()
  "Cancel the running fixpoint run."
  (interactive)
  (fixpoint--execute "fixpoint.cancel" nil))

(provide 'fixpoint)
;;; fixpoint.el ends here
