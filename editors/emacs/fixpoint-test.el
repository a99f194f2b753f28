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
  "The recorded workspace/executeCommand for COMMAND, or nil."
  (seq-find (lambda (m)
              (and (equal (plist-get m :method) "workspace/executeCommand")
                   (equal (plist-get (plist-get m :params) :command) command)))
            (fixpoint-test--received)))

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
                   '(:model "scripted" :maxIterations 3))))
  (let ((cfg (fixpoint-test--wait
              (lambda () (seq-find (lambda (m) (plist-member m :configuration))
                                   (fixpoint-test--received))))))
    (should (equal (plist-get cfg :configuration) '((:model "scripted" :maxIterations 3))))))

(ert-deftest fixpoint-solve-goal-sends-the-command ()
  (let* ((file (fixpoint-test--file))
         (m (progn (fixpoint-solve-goal "add a --json flag")
                   (fixpoint-test--wait (lambda () (fixpoint-test--executed "fixpoint.solveGoal")))))
         (arg (car (plist-get (plist-get m :params) :arguments))))
    (should (equal (plist-get arg :goal) "add a --json flag"))
    (should (string-suffix-p "/pkg/a.go" (plist-get arg :uri)))
    (should (string-prefix-p "file://" (plist-get arg :uri)))
    (ignore file)))

(ert-deftest fixpoint-fix-tests-shows-progress ()
  (fixpoint-test--file)
  (setq fixpoint-test--statuses nil)
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
    (should (equal (cadr (should-error (fixpoint-fix-tests) :type 'user-error))
                   "No fixpoint server for this buffer: run M-x fixpoint-eglot-setup, then M-x eglot"))))

(provide 'fixpoint-test)
;;; fixpoint-test.el ends here
