;;; fixpoint-test.el --- Headless tests of fixpoint.el with eglot  -*- lexical-binding: t; -*-

;;; Commentary:

;; Drives fixpoint.el through eglot against the fake server of the Neovim
;; tests (editors/nvim/tests/fake_server.py), which records what it receives.
;; Run from the repository root:
;;
;;   FIXPOINT_FAKE=editors/nvim/tests/fake_server.py FIXPOINT_LOG=/tmp/log.jsonl \
;;   FIXPOINT_PROJECT=/tmp/project emacs --batch -L editors/emacs \
;;     -l editors/emacs/fixpoint-test.el -f ert-run-tests-batch-and-exit
;;
;; FIXPOINT_PROJECT must be a directory with a .git directory and pkg/a.go.

;;; Code:

(require 'ert)
(require 'json)
(require 'fixpoint)

(defvar fixpoint-test--statuses nil "Values `fixpoint-status' took, newest first.")

(defun fixpoint-test--received ()
  "The messages the fake server recorded, as plists."
  (let ((log (getenv "FIXPOINT_LOG")))
    (when (file-exists-p log)
      (with-temp-buffer
        (insert-file-contents log)
        (let ((json-object-type 'plist) (json-array-type 'list) (json-false nil) out)
          (dolist (line (split-string (buffer-string) "\n" t))
            (push (json-read-from-string line) out))
          (nreverse out))))))

(defun fixpoint-test--wait (pred &optional seconds)
  "Wait until PRED returns non-nil, up to SECONDS (default 10); return its value."
  (let ((deadline (+ (float-time) (or seconds 10))) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      ;; Name the process: a bare wait does not run eglot's process filter in batch mode.
      (let ((server (eglot-current-server)))
        (if server
            (accept-process-output (jsonrpc--process server) 0.05)
          (sleep-for 0.05))))
    v))

(defun fixpoint-test--executed (command)
  "The last recorded workspace/executeCommand for COMMAND, or nil."
  (seq-find (lambda (m)
              (and (equal (plist-get m :method) "workspace/executeCommand")
                   (equal (plist-get (plist-get m :params) :command) command)))
            (reverse (fixpoint-test--received))))

(defun fixpoint-test--file ()
  "Visit pkg/a.go in the project and connect eglot."
  (let ((file (expand-file-name "pkg/a.go" (getenv "FIXPOINT_PROJECT"))))
    (find-file file)
    (unless (eglot-current-server)
      (apply #'eglot (eglot--guess-contact)))
    (should (cl-typep (eglot-current-server) 'eglot-fixpoint))
    file))

(setq fixpoint-program (list "python3" (expand-file-name (getenv "FIXPOINT_FAKE")) (getenv "FIXPOINT_LOG"))
      fixpoint-major-modes '(fundamental-mode)
      fixpoint-settings '(:model "scripted" :maxIterations 3))
(fixpoint-eglot-setup)
(add-variable-watcher 'fixpoint-status
                      (lambda (_sym val op _where)
                        (when (eq op 'set) (push val fixpoint-test--statuses))))

(ert-deftest fixpoint-connects-with-settings ()
  (fixpoint-test--file)
  (let ((init (fixpoint-test--wait
               (lambda () (seq-find (lambda (m) (equal (plist-get m :method) "initialize"))
                                    (fixpoint-test--received))))))
    (should init)
    (should (equal (plist-get (plist-get init :params) :initializationOptions)
                   '(:model "scripted" :maxIterations 3)))
    ;; The plugin previews edits and creates files itself, and names itself
    ;; (eglot 1.9 sends no clientInfo).
    (let ((caps (plist-get (plist-get init :params) :capabilities)))
      (should (equal (plist-get caps :experimental) '(:fixpointPreview t :fixpointClient "emacs")))
      (should (equal (plist-get (plist-get (plist-get caps :workspace) :workspaceEdit) :resourceOperations)
                     '("create")))))
  (let ((cfg (fixpoint-test--wait
              (lambda () (seq-find (lambda (m) (plist-member m :configuration))
                                   (fixpoint-test--received))))))
    (should (equal (plist-get cfg :configuration) '((:model "scripted" :maxIterations 3))))))

(ert-deftest fixpoint-solve-goal-sends-the-command ()
  (let* ((file (fixpoint-test--file))
         (m (progn (fixpoint-solve-goal "add a --json flag")
                   (fixpoint-test--wait
                    (lambda ()
                      (let ((m (fixpoint-test--executed "fixpoint.solveGoal")))
                        (and m (equal (plist-get (car (plist-get (plist-get m :params) :arguments)) :goal)
                                      "add a --json flag")
                             m))))))
         (arg (car (plist-get (plist-get m :params) :arguments))))
    (should (equal (plist-get arg :goal) "add a --json flag"))
    (should (string-suffix-p "/pkg/a.go" (plist-get arg :uri)))
    (should (string-prefix-p "file://" (plist-get arg :uri)))
    (ignore file)))

(ert-deftest fixpoint-fix-tests-shows-progress ()
  (fixpoint-test--file)
  (setq fixpoint-test--statuses nil
        fixpoint--status-seen nil) ; this fake server sends only $/progress for fixTests
  (fixpoint-fix-tests)
  (should (fixpoint-test--wait (lambda () (fixpoint-test--executed "fixpoint.fixTests"))))
  (should (fixpoint-test--wait (lambda () (and fixpoint-test--statuses (equal fixpoint-status "")))))
  (should (equal (reverse fixpoint-test--statuses)
                 '("fixpoint: Fix until tests pass"
                   "fixpoint Iteration 1/6 · planning"
                   "fixpoint Iteration 2/6 · running tests · 3 failed"
                   ""))))

(ert-deftest fixpoint-run-tests-and-cancel ()
  (fixpoint-test--file)
  (fixpoint-run-tests)
  (let ((m (fixpoint-test--wait (lambda () (fixpoint-test--executed "fixpoint.runTests")))))
    (should (string-suffix-p "/pkg/a.go" (plist-get (car (plist-get (plist-get m :params) :arguments)) :uri))))
  (fixpoint-cancel)
  (let ((m (fixpoint-test--wait (lambda () (fixpoint-test--executed "fixpoint.cancel")))))
    (should m)
    (should (null (plist-get (plist-get m :params) :arguments)))))

(ert-deftest fixpoint-without-server-says-what-to-do ()
  (with-temp-buffer
    (let ((fixpoint-program (list (executable-find "emacs") "serve"))) ; a program that exists
      (should (equal (cadr (should-error (fixpoint-fix-tests) :type 'user-error))
                     "No fixpoint server for this buffer: run M-x fixpoint-eglot-setup, then M-x eglot")))
    (let ((fixpoint-program '("/nonexistent/fixpoint" "serve")))
      (should (equal (cadr (should-error (fixpoint-fix-tests) :type 'user-error))
                     "No fixpoint server: the program /nonexistent/fixpoint (fixpoint-program) is not on exec-path; install it (go install ./cmd/fixpoint in a fixpoint checkout) or set fixpoint-program")))))

(defun fixpoint-test--shown (notifications)
  "Send NOTIFICATIONS (lists: METHOD . PARAMS) to the handlers; return what was shown."
  (fixpoint-test--file)
  (let ((srv (eglot-current-server)) shown)
    (cl-letf (((symbol-function 'message)
               (lambda (fmt &rest args) (push (apply #'format fmt args) shown))))
      (dolist (n notifications)
        (apply #'eglot-handle-notification srv (car n) (cdr n))))
    (reverse shown)))

(ert-deftest fixpoint-error-is-shown-once-and-whole ()
  ;; A Docker error: the server shows it (window/showMessage), then ends the
  ;; run with it as the reason. The user sees it once, complete, unprefixed.
  (let* ((err "open sandbox: docker sandbox: docker engine: sandbox backend unavailable: Cannot connect to the Docker daemon at unix:///nonexistent/docker.sock. Is the docker daemon running?")
         (shown (fixpoint-test--shown
                 `(($/fixpoint/status :runId "run-71" :kind "test" :state "running" :message "Run tests")
                   (window/showMessage :type 1 :message ,(concat "fixpoint: cannot start: " err))
                   ($/fixpoint/status :runId "run-71" :kind "test" :state "failed"
                                      :message "Cannot start: open sandbox: docker sandbox: docker engine: sandbox backend…"
                                      :reason ,err)))))
    (should (equal (cl-count-if (lambda (m) (string-match-p "Cannot connect to the Docker daemon" m)) shown) 1))
    (should (member (concat "fixpoint: cannot start: " err) shown))
    (should-not (cl-some (lambda (m) (string-match-p "Server reports" m)) shown))
    (should (equal fixpoint-status "fixpoint: failed"))))

(ert-deftest fixpoint-final-reason-is-whole-when-not-shown-before ()
  (let* ((why "stats.go was changed in the editor during the run, in the same places as the result")
         (shown (fixpoint-test--shown
                 `(($/fixpoint/status :runId "run-72" :kind "fix" :state "running" :message "Fix until tests pass")
                   ($/fixpoint/status :runId "run-72" :kind "fix" :state "verified-not-applied"
                                      :message "Verified, not applied: stats.go was changed in the…" :reason ,why)))))
    (should (member (concat "fixpoint: verified, not applied: " why) shown))
    (should (equal (cl-count-if (lambda (m) (string-match-p "was changed" m)) shown) 1))))

(defun fixpoint-test--apply-results ()
  "The applyEdit answers the fake server recorded, oldest first."
  (delq nil (mapcar (lambda (m) (plist-member m :applyResult)) (fixpoint-test--received))))

(defun fixpoint-test--preview (answer)
  "Solve the fake goal \"preview\"; y-or-n-p does ANSWER (yes, no, quit).
Returns (PROMPT DIFF-TEXT APPLY-RESULT STATUSES)."
  (fixpoint-test--file)
  (let ((before (length (fixpoint-test--apply-results)))
        prompt diff)
    (setq fixpoint-test--statuses nil)
    (cl-letf (((symbol-function 'y-or-n-p)
               (lambda (p)
                 (setq prompt p
                       diff (with-current-buffer "*fixpoint diff*" (buffer-string)))
                 (pcase answer ('yes t) ('no nil) ('quit (signal 'quit nil))))))
      (fixpoint-solve-goal "preview")
      (should (fixpoint-test--wait (lambda () (> (length (fixpoint-test--apply-results)) before))))
      (should (fixpoint-test--wait (lambda () (not (equal (plist-get fixpoint-status-params :state) "running"))))))
    (list prompt diff (plist-get (car (last (fixpoint-test--apply-results))) :applyResult)
          (reverse fixpoint-test--statuses))))

(ert-deftest fixpoint-preview-accepted-creates-the-file ()
  (pcase-let ((`(,prompt ,diff ,result ,statuses) (fixpoint-test--preview 'yes))
              (made (expand-file-name "new/dir/made.go" (getenv "FIXPOINT_PROJECT"))))
    (should (string-match-p "new/dir/made.go (\\+1 −0)" prompt))
    (should (string-match-p "^\\+package dir$" diff))
    (should (equal result '(:applied t)))
    (should (file-exists-p made))
    (should (equal (with-current-buffer (find-buffer-visiting made) (buffer-string)) "package dir\n"))
    ;; Progress seen in the mode line variable, one status per change.
    (should (equal statuses '("fixpoint 1/6 · planning" "fixpoint 1/6 · running tests · 2 failed" "fixpoint: applied")))
    (should (member '(:eval fixpoint-status) mode-line-misc-info))
    (with-current-buffer (find-buffer-visiting made) (set-buffer-modified-p nil) (kill-buffer))
    (delete-directory (expand-file-name "new" (getenv "FIXPOINT_PROJECT")) t)))

(ert-deftest fixpoint-preview-declined-is-not-an-error ()
  (dolist (answer '(no quit))
    (pcase-let ((`(,prompt ,_diff ,result ,_statuses) (fixpoint-test--preview answer)))
      (should prompt)
      (should (equal result '(:applied nil :failureReason "declined"))) ; false as read back
      (should (equal fixpoint-status "fixpoint: verified, not applied"))
      (should-not (file-exists-p (expand-file-name "new/dir/made.go" (getenv "FIXPOINT_PROJECT")))))))

(ert-deftest fixpoint-message-request-defaults-to-the-first-action ()
  (let ((server (progn (fixpoint-test--file) (eglot-current-server))))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt _coll &optional _pred _req _init _hist def &rest _) def)))
      (should (equal (eglot-handle-request server 'window/showMessageRequest
                                           :type 2 :message "not verified"
                                           :actions [(:title "Show log") (:title "Apply best attempt")])
                     '(:title "Show log"))))
    (cl-letf (((symbol-function 'completing-read) (lambda (&rest _) (signal 'quit nil))))
      (should (eq (eglot-handle-request server 'window/showMessageRequest
                                        :type 2 :message "not verified"
                                        :actions [(:title "Show log") (:title "Apply best attempt")])
                  :null)))))

(ert-deftest fixpoint-cancel-with-nothing-running-says-so ()
  (fixpoint-test--file)
  (let ((messages nil))
    (cl-letf (((symbol-function 'message)
               (lambda (fmt &rest args) (push (apply #'format fmt args) messages))))
      (fixpoint-cancel)
      (should (fixpoint-test--wait (lambda () (member "fixpoint: nothing to cancel: no fixpoint run is active" messages)))))))

(provide 'fixpoint-test)
;;; fixpoint-test.el ends here
