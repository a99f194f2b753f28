;;; plugin_e2e.el --- drive `fixpoint serve' through fixpoint.el (Emacs 28, eglot 1.9, batch)  -*- lexical-binding: t -*-
;; Env: FIXPOINT_BIN, E2E_ROOT (a copy of testdata/nvim/gotable), E2E_OUT
;; (one "key<TAB>json" line per check).
;;   1. M-x fixpoint-run-tests: both failing table cases are diagnostics on
;;      the line they share; the status ends "tests-failing".
;;   2. M-x fixpoint-solve-goal: the verified edit is shown in the diff
;;      buffer and asked with y-or-n-p (answered yes here); the file it
;;      creates (mean.go) and the edit land in buffers.
;; Progress: every value of `fixpoint-status' is recorded.
;; The buffers are in go-mode (Debian elpa-go-mode), a real major mode:
;; eglot asks the server for documentSymbol (imenu), which must answer,
;; not fail, or the user sees an imenu error after every edit.
(require 'eglot)
(require 'go-mode)
(require 'json)
(require 'fixpoint)
(fixpoint-eglot-setup) ; as a user would: the mode line shows fixpoint-status
(defvar e2e-root (file-name-as-directory (getenv "E2E_ROOT")))
(defvar e2e-out (getenv "E2E_OUT"))
(defvar e2e-statuses nil)
(defvar e2e-asked nil)
(defun e2e-emit (key value)
  (with-temp-buffer
    (insert key "\t" (json-encode value) "\n")
    (append-to-file (point-min) (point-max) e2e-out)))
(defun e2e-wait (pred secs)
  (let ((deadline (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    (funcall pred)))
(defun e2e-text (buf) (with-current-buffer buf (buffer-substring-no-properties (point-min) (point-max))))

(add-variable-watcher 'fixpoint-status
                      (lambda (_sym val op _where)
                        (when (and (eq op 'set) (not (equal val (car e2e-statuses))))
                          (push val e2e-statuses))))
;; The user answers the preview with y, after it was shown.
(advice-add 'y-or-n-p :override
            (lambda (prompt)
              (setq e2e-asked (list :prompt prompt
                                    :diff (with-current-buffer "*fixpoint diff*" (buffer-string))))
              t))

(condition-case err
    (let* ((test-buf (find-file-noselect (concat e2e-root "stats_test.go")))
           (src-buf (find-file-noselect (concat e2e-root "stats.go")))
           server)
      (with-current-buffer test-buf (go-mode))
      (with-current-buffer src-buf (go-mode))
      (with-current-buffer test-buf
        (setq server (eglot '(go-mode) (cons 'transient e2e-root) 'eglot-fixpoint
                            (list (getenv "FIXPOINT_BIN") "serve") "go")))
      (unless (e2e-wait (lambda () (and (with-current-buffer test-buf (eglot-managed-p))
                                        (with-current-buffer src-buf (eglot-managed-p))))
                        30)
        (error "stats_test.go is not managed by eglot"))
      ;; imenu, as which-function-mode or M-x imenu would ask: eglot sends
      ;; textDocument/documentSymbol first.
      (e2e-emit "imenu" (with-current-buffer test-buf
                          (condition-case err
                              (progn (setq imenu--index-alist nil)
                                     (imenu--make-index-alist t)
                                     (list :ok t :mode (symbol-name major-mode)
                                           :names (vconcat (mapcar (lambda (x) (format "%s" (car x))) imenu--index-alist))))
                            (error (list :ok :json-false :error (error-message-string err))))))
      ;; 1. Run the tests.
      (with-current-buffer test-buf (fixpoint-run-tests))
      (unless (e2e-wait (lambda () (>= (length (with-current-buffer test-buf eglot--diagnostics)) 2)) 180)
        (error "fewer than 2 diagnostics after fixpoint-run-tests: %S" (with-current-buffer test-buf eglot--diagnostics)))
      (e2e-emit "diagnostics"
                (vconcat (mapcar (lambda (d)
                                   (list :line (with-current-buffer test-buf
                                                 (1- (line-number-at-pos (flymake-diagnostic-beg d))))
                                         :text (flymake-diagnostic-text d)))
                                 (with-current-buffer test-buf eglot--diagnostics))))
      (unless (e2e-wait (lambda () (equal (plist-get fixpoint-status-params :state) "tests-failing")) 30)
        (error "no tests-failing status: %S" fixpoint-status-params))
      (e2e-emit "test_status" fixpoint-status)
      ;; 2. Solve a goal whose result creates files.
      (with-current-buffer src-buf (fixpoint-solve-goal "add Mean in mean.go"))
      (unless (e2e-wait (lambda () (equal (plist-get fixpoint-status-params :state) "applied")) 240)
        (error "the solve did not land: %S" fixpoint-status-params))
      (e2e-emit "asked" (or e2e-asked :null))
      (let ((mean (find-buffer-visiting (concat e2e-root "mean.go"))))
        (e2e-emit "mean" (if mean (e2e-text mean) :null)))
      (e2e-emit "stats" (e2e-text src-buf))
      (e2e-emit "statuses" (vconcat (reverse e2e-statuses)))
      (e2e-emit "mode_line" (if (member '(:eval fixpoint-status) mode-line-misc-info) t :json-false))
      (let ((inhibit-message t)) (eglot-shutdown server)))
  (error (e2e-emit "error" (error-message-string err))))
(kill-emacs 0)
