;;; firstrun.el --- the first-run messages in Emacs 28 + eglot 1.9 + fixpoint.el (batch)  -*- lexical-binding: t -*-
;; Env: FIXPOINT_BIN, E2E_ROOT (a copy of testdata/nvim/gotable), E2E_OUT
;; (one "key<TAB>json" line per check), E2E_ACTION ("fix" or "test"),
;; E2E_WANT (regexps separated by "|||": wait until each was shown).
;; Records every echo-area message (what the user reads) and the final
;; `fixpoint-status', in go-mode, then cancels the run.
(require 'eglot)
(require 'go-mode)
(require 'json)
(require 'fixpoint)
(fixpoint-eglot-setup)
(defvar e2e-root (file-name-as-directory (getenv "E2E_ROOT")))
(defvar e2e-out (getenv "E2E_OUT"))
(defvar e2e-messages nil "Every message shown, oldest last.")
(defun e2e-emit (key value)
  (with-temp-buffer
    (insert key "\t" (json-encode value) "\n")
    (append-to-file (point-min) (point-max) e2e-out)))
(defun e2e-wait (pred secs)
  (let ((deadline (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    (funcall pred)))
(advice-add 'message :around
            (lambda (orig fmt &rest args)
              (let ((text (and fmt (apply #'format fmt args))))
                (when text (push (substring-no-properties text) e2e-messages))
                (apply orig fmt args))))
(defun e2e-shown (re) (cl-some (lambda (m) (string-match-p re m)) e2e-messages))

(condition-case err
    (let ((buf (find-file-noselect (concat e2e-root "stats_test.go")))
          (want (split-string (getenv "E2E_WANT") "|||" t)))
      (with-current-buffer buf
        (go-mode)
        (eglot '(go-mode) (cons 'transient e2e-root) 'eglot-fixpoint (list (getenv "FIXPOINT_BIN") "serve") "go"))
      (unless (e2e-wait (lambda () (with-current-buffer buf (eglot-managed-p))) 30)
        (error "stats_test.go is not managed by eglot"))
      (with-current-buffer buf
        (if (equal (getenv "E2E_ACTION") "fix") (fixpoint-fix-tests) (fixpoint-run-tests)))
      (e2e-wait (lambda () (cl-every #'e2e-shown want)) 120)
      (when (equal (getenv "E2E_ACTION") "test")
        (e2e-wait (lambda () (member (plist-get fixpoint-status-params :state) '("failed" "tests-failing" "applied"))) 60))
      ;; Late messages of the same outcome would arrive now.
      (e2e-wait (lambda () nil) 2)
      (e2e-emit "messages" (vconcat (reverse e2e-messages)))
      (e2e-emit "status" fixpoint-status)
      (with-current-buffer buf
        (ignore-errors (fixpoint-cancel))
        (ignore-errors (eglot-shutdown (eglot-current-server)))))
  (error (e2e-emit "error" (error-message-string err))))
(kill-emacs 0)
