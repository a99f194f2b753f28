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
;; pylsp, rust-analyzer...).  Progress ("fixpoint 2/6 · running tests · 3 failed") comes
;; from the server's $/fixpoint/status notification (eglot 1.9 announces no
;; work-done progress): it is echoed and kept in `fixpoint-status', which
;; `fixpoint-eglot-setup' puts in the mode line.
;;
;; A verified edit is shown before it lands: a *fixpoint diff* buffer and
;; a y/n question (C-g or n declines; declining is not an error).  Set
;; `:preview "never"' in `fixpoint-settings' to apply at once.  Files the
;; edit creates are created here (eglot 1.9 cannot).  The API key comes from
;; the environment (FIXPOINT_API_KEY), never from this file.

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
  ;; BEGIN generated from lang/*/ (lang.Editors) by `go generate ./editors`: do not edit
  '(go-mode go-ts-mode rust-mode rust-ts-mode ruby-mode ruby-ts-mode
    js-mode js-ts-mode typescript-mode typescript-ts-mode python-mode
    python-ts-mode)
  ;; END generated
  "Major modes in which eglot starts `fixpoint serve'."
  :type '(repeat symbol))

(defcustom fixpoint-settings nil
  "Server settings as a plist, e.g. (:model \"gpt-4o\" :maxIterations 6).
Sent as initializationOptions and as the \"fixpoint\" section of
workspace/configuration.  Keys: :model :baseUrl :sandbox :image
:maxIterations :testCmd :dataDir :memory :runtime :allowTestEdits
:temperature :preview (\"always\", the default, or \"never\").
nil means the server's own layers (environment,
.fixpoint.toml, defaults)."
  :type 'plist)

(defvar fixpoint-status ""
  "The state of the last fixpoint run, for the mode line.
\"fixpoint 2/6 · running tests\" while it runs, then \"fixpoint: applied\",
\"fixpoint: verified, not applied\", \"fixpoint: 2 failing\" (Run Tests),
\"fixpoint: tests pass\" or \"fixpoint: failed\"; empty when idle.
`fixpoint-eglot-setup' adds it to `mode-line-misc-info'.")

(defvar fixpoint-status-params nil
  "The params of the last $/fixpoint/status, as a plist.")

(defvar fixpoint--status-seen nil
  "Non-nil once the server sent $/fixpoint/status.
From then on $/progress is not shown: one status per run.")

(defvar fixpoint--new-run nil
  "Non-nil when the last $/fixpoint/status began a run.")

(defvar fixpoint-last-diff nil
  "The diff of the last finished run, as the server sent it.")

(defconst fixpoint--diff-buffer "*fixpoint diff*"
  "The buffer that shows a verified edit before it is applied.")

(defvar fixpoint-goal-history nil
  "Goals given to `fixpoint-solve-goal'.")

(defclass eglot-fixpoint (eglot-lsp-server) ()
  :documentation "The fixpoint language server, `fixpoint serve'.")

(cl-defmethod eglot-initialization-options ((_server eglot-fixpoint))
  "Send `fixpoint-settings' as initializationOptions."
  (or fixpoint-settings eglot--{}))

;; Capabilities: eglot's own, plus the two the shipped plugin adds itself:
;; a verified edit is previewed here (experimental.fixpointPreview), and
;; files it creates are created here (resourceOperations "create").
(cl-defmethod eglot-client-capabilities ((_server eglot-fixpoint))
  "Eglot's capabilities, plus fixpoint's preview and file creation."
  (let* ((caps (copy-tree (cl-call-next-method)))
         (ws (plist-get caps :workspace))
         (we (plist-get ws :workspaceEdit)))
    (setq we (plist-put (copy-sequence we) :resourceOperations ["create"]))
    ;; fixpoint.el previews edits itself: without this, an eglot that
    ;; announces change annotations would get annotated edits instead.
    (cl-remf we :changeAnnotationSupport)
    (setq ws (plist-put ws :workspaceEdit we))
    (setq caps (plist-put caps :workspace ws))
    ;; eglot 1.9 sends no clientInfo: name the client, so that the server's
    ;; messages name M-x fixpoint-cancel rather than fixpoint.cancel.
    (plist-put caps :experimental (list :fixpointPreview t :fixpointClient "emacs"))))

(defun fixpoint--status-text (state kind message failing iteration max)
  "The mode line text for a status STATE of a run of KIND.
MESSAGE, FAILING, ITERATION and MAX are the status fields."
  (pcase state
    ("running" (concat "fixpoint"
                       (if (and (numberp iteration) (> iteration 0) (numberp max) (> max 0))
                           (format " %d/%d" iteration max) "")
                       (let ((m (replace-regexp-in-string "\\`[Ii]teration +[0-9]+/[0-9]+ *· *" "" (or message ""))))
                         (if (string-empty-p m) "" (concat " · " m)))))
    ("applied" (if (equal kind "test") "fixpoint: tests pass" "fixpoint: applied"))
    ("verified-not-applied" "fixpoint: verified, not applied")
    ("tests-failing" (format "fixpoint: %s failing" (or failing 0)))
    ("failed" "fixpoint: failed")
    (_ "")))

(defun fixpoint--echo (text)
  "Show TEXT in the echo area on one line, without logging it twice."
  (let ((message-truncate-lines t))
    (message "%s" (car (split-string (or text "") "\n")))))

(defvar fixpoint--last-shown nil
  "The last window/showMessage text, shown whole.
A final status whose reason it already told is not echoed again.")

(defun fixpoint--show (text &optional face)
  "Show TEXT whole in the echo area (it grows to fit), in FACE if non-nil."
  (let ((message-truncate-lines nil))
    (message "%s" (if face (propertize text 'face face) text))))

(cl-defmethod eglot-handle-notification
  ((_server eglot-fixpoint) (_method (eql window/showMessage)) &key type message &allow-other-keys)
  "Show fixpoint's MESSAGE (of TYPE) once and whole: not cut to a line,
not prefixed, and not repeated by the run's final status."
  (setq fixpoint--last-shown (or message ""))
  (fixpoint--show fixpoint--last-shown (and (numberp type) (<= type 1) 'error)))

(defun fixpoint--final-text (state message reason)
  "The one message for a final STATE with MESSAGE and REASON, or nil.
nil when the last window/showMessage already told REASON."
  (let ((why (and (stringp reason) (not (member reason '("" "declined"))) reason)))
    (cond
     ((and why fixpoint--last-shown (string-match-p (regexp-quote why) fixpoint--last-shown)) nil)
     ;; The status message is clipped to a line; the reason is whole.
     ((and why (not (string-match-p (regexp-quote why) (or message ""))))
      (concat "fixpoint: " (pcase state
                             ("failed" "failed: ")
                             ("verified-not-applied" "verified, not applied: ")
                             (_ (concat state ": ")))
              why))
     (t (concat "fixpoint: " (or message state))))))

(cl-defmethod eglot-handle-notification
  ((_server eglot-fixpoint) (_method (eql $/fixpoint/status))
   &rest params &key state kind message failing iteration maxIterations reason diff
   &allow-other-keys)
  "Show fixpoint's run status PARAMS (STATE, KIND, MESSAGE, FAILING,
ITERATION, MAXITERATIONS, REASON, DIFF) in the mode line and echo area."
  (setq fixpoint--status-seen t
        fixpoint--new-run (not (equal (plist-get params :runId) (plist-get fixpoint-status-params :runId)))
        fixpoint-status-params params
        fixpoint-status (fixpoint--status-text state kind message failing iteration maxIterations))
  (when (and (stringp diff) (not (string-empty-p diff)))
    (setq fixpoint-last-diff diff))
  (when fixpoint--new-run
    (setq fixpoint--last-shown nil))
  (force-mode-line-update t)
  (if (equal state "running")
      (fixpoint--echo
       (concat fixpoint-status
               ;; The first status of a run says how to cancel it.
               (if fixpoint--new-run " (M-x fixpoint-cancel stops it)" "")))
    (let ((text (fixpoint--final-text state message reason)))
      (when text (fixpoint--show text)))))

(cl-defmethod eglot-handle-notification
  ((_server eglot-fixpoint) (_method (eql $/progress)) &key token value)
  "Show fixpoint's work-done progress VALUE for TOKEN (servers without
$/fixpoint/status)."
  (ignore token)
  (unless fixpoint--status-seen
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
      (fixpoint--echo (format "fixpoint: %s" (or msg title kind))))))

(cl-defmethod eglot-handle-request
  ((_server eglot-fixpoint) (_method (eql window/showMessageRequest))
   &key type message actions &allow-other-keys)
  "Ask the user MESSAGE (of TYPE) with ACTIONS.
The first action, the server's safe choice, is the default; C-g
dismisses the question (a null answer) instead of raising an error in
the process filter."
  (let* ((titles (mapcar (lambda (a) (plist-get a :title)) (append actions nil)))
         (label (condition-case nil
                    (completing-read
                     (format "%s%s\nChoose (default %s): "
                             (if (and (numberp type) (<= type 1)) "Error: " "")
                             message (or (car titles) "OK"))
                     (or titles '("OK")) nil t nil nil (car titles))
                  (quit nil))))
    (if (and label (member label titles)) (list :title label) :null)))

(defun fixpoint--show-diff (meta)
  "Show the diff of the edit described by META in `fixpoint--diff-buffer'."
  (with-current-buffer (get-buffer-create fixpoint--diff-buffer)
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert (format "fixpoint: %s (%s)\n\n" (or (plist-get meta :label) "")
                      (or (plist-get meta :description) "")))
      (insert (or (plist-get meta :diff) ""))
      (goto-char (point-min))
      (when (fboundp 'diff-mode) (diff-mode))
      (setq buffer-read-only t)))
  (display-buffer fixpoint--diff-buffer))

(defun fixpoint--files-summary (meta)
  "\"a.go (+1 −1), b.go (+3 −0)\" for the files of META."
  (mapconcat (lambda (f) (format "%s (+%s −%s)" (plist-get f :path)
                                 (or (plist-get f :added) 0) (or (plist-get f :removed) 0)))
             (append (plist-get meta :files) nil) ", "))

(defun fixpoint--confirm (meta)
  "Show the edit of META and ask whether to apply it; nil when declined.
C-g counts as no."
  (fixpoint--show-diff meta)
  (prog1 (condition-case nil
             (y-or-n-p (format "fixpoint: apply %s? " (fixpoint--files-summary meta)))
           (quit nil))
    (let ((win (get-buffer-window fixpoint--diff-buffer t)))
      (when (and win (not (one-window-p t win))) (delete-window win)))))

(defun fixpoint--apply-edit (edit)
  "Apply the WorkspaceEdit EDIT: create files here, the rest through eglot."
  (let ((changes (append (plist-get edit :documentChanges) nil))
        text-edits)
    (dolist (c changes)
      (pcase (plist-get c :kind)
        ("create"
         (let ((path (funcall (if (fboundp 'eglot-uri-to-path) 'eglot-uri-to-path 'eglot--uri-to-path)
                              (plist-get c :uri))))
           (make-directory (file-name-directory path) t)
           (unless (file-exists-p path) (write-region "" nil path nil 'silent))
           (find-file-noselect path)))
        ('nil (push c text-edits))
        (kind (jsonrpc-error "fixpoint.el cannot apply a %s operation" kind))))
    ;; Visit every file first: eglot would otherwise ask again.
    (dolist (c text-edits)
      (find-file-noselect (funcall (if (fboundp 'eglot-uri-to-path) 'eglot-uri-to-path 'eglot--uri-to-path)
                                   (plist-get (plist-get c :textDocument) :uri))))
    (eglot--apply-workspace-edit
     (if changes
         (list :documentChanges (vconcat (nreverse text-edits)))
       edit)
     nil)))

(cl-defmethod eglot-handle-request
  ((_server eglot-fixpoint) (_method (eql workspace/applyEdit))
   &key edit fixpoint &allow-other-keys)
  "Apply fixpoint's EDIT; when FIXPOINT (the server's notes) asks for it,
show the diff and ask first.  Declining answers applied=false with the
reason \"declined\", which the server reports as such, not as an error."
  (if (and fixpoint (eq (plist-get fixpoint :confirm) t)
           (not (fixpoint--confirm fixpoint)))
      (list :applied :json-false :failureReason "declined")
    (condition-case err
        (progn (fixpoint--apply-edit edit) (list :applied t))
      (error (list :applied :json-false :failureReason (error-message-string err))))))

;;;###autoload
(defun fixpoint-eglot-setup ()
  "Make eglot start `fixpoint serve' in `fixpoint-major-modes'.
Also adds the \"fixpoint\" section to the default
`eglot-workspace-configuration'."
  (interactive)
  (add-to-list 'eglot-server-programs
               (cons fixpoint-major-modes (cons 'eglot-fixpoint fixpoint-program)))
  (add-to-list 'mode-line-misc-info '(:eval fixpoint-status) t)
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
      ;; Name the real cause: most often the binary is missing, and
      ;; running the setup again would not help.
      (unless (executable-find (car fixpoint-program))
        (user-error "No fixpoint server: the program %s (fixpoint-program) is not on exec-path; install it (go install ./cmd/fixpoint in a fixpoint checkout) or set fixpoint-program"
                    (car fixpoint-program)))
      (user-error "No fixpoint server for this buffer: run M-x fixpoint-eglot-setup, then M-x eglot"))
    (jsonrpc-async-request
     server :workspace/executeCommand
     (list :command command :arguments (if arg (vector arg) []))
     :success-fn (lambda (result)
                   (let ((msg (plist-get result :message)))
                     (when (and (stringp msg) (not (eq (plist-get result :started) t)))
                       (fixpoint--echo (concat "fixpoint: " msg)))))
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
  "Cancel the running fixpoint run (says so when nothing runs)."
  (interactive)
  (fixpoint--execute "fixpoint.cancel" nil))

;;;###autoload
(defun fixpoint-show-diff ()
  "Show the diff of the last finished fixpoint run."
  (interactive)
  (unless fixpoint-last-diff (user-error "No fixpoint run has finished yet"))
  (fixpoint--show-diff (list :label "last run" :description "" :diff fixpoint-last-diff)))

(provide 'fixpoint)
;;; fixpoint.el ends here
