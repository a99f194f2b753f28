;;; e2e.el --- drive `fixpoint serve' from Emacs 28 + eglot 1.9 (batch)  -*- lexical-binding: t -*-
;; Env: FIXPOINT_BIN, E2E_ROOT, E2E_OUT (one "key<TAB>json" line per check).
(require 'eglot)
(require 'json)
(setq eglot-confirm-server-initiated-edits nil)
(defvar e2e-root (file-name-as-directory (getenv "E2E_ROOT")))
(defvar e2e-out (getenv "E2E_OUT"))
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

(condition-case err
    (let* ((test-buf (find-file-noselect (concat e2e-root "test_calc.py")))
           (calc-buf (find-file-noselect (concat e2e-root "calc.py")))
           (test-uri (eglot--path-to-uri (concat e2e-root "test_calc.py")))
           server)
      (dolist (b (list test-buf calc-buf)) (with-current-buffer b (python-mode)))
      (with-current-buffer calc-buf
        (setq server (eglot '(python-mode) (cons 'transient e2e-root) 'eglot-lsp-server
                            (list (getenv "FIXPOINT_BIN") "serve") "python")))
      (unless (e2e-wait (lambda () (with-current-buffer test-buf (eglot-managed-p))) 30)
        (error "test_calc.py is not managed by eglot"))
      (jsonrpc-request server :workspace/executeCommand
                       (list :command "fixpoint.runTests" :arguments (vector (list :uri test-uri))))
      (unless (e2e-wait (lambda () (with-current-buffer test-buf eglot--diagnostics)) 180)
        (error "no diagnostics after runTests"))
      (let* ((d (car (with-current-buffer test-buf eglot--diagnostics)))
             (line (with-current-buffer test-buf (1- (line-number-at-pos (flymake-diagnostic-beg d)))))
             (pos (list :line line :character 0))
             (actions (jsonrpc-request server :textDocument/codeAction
                                       (list :textDocument (list :uri test-uri)
                                             :range (list :start pos :end pos)
                                             :context (list :diagnostics
                                                            (vector (list :range (list :start pos :end pos)
                                                                          :source "fixpoint"
                                                                          :message (flymake-diagnostic-text d)))))))
             (fix (seq-find (lambda (a) (equal (plist-get a :kind) "quickfix")) actions)))
        (e2e-emit "diagnostic" (list :line line :text (flymake-diagnostic-text d)))
        (e2e-emit "titles" (vconcat (mapcar (lambda (a) (plist-get a :title)) actions)))
        (unless fix (error "no quickfix action"))
        (let ((cmd (plist-get fix :command)))
          (jsonrpc-request server :workspace/executeCommand
                           (list :command (plist-get cmd :command) :arguments (plist-get cmd :arguments)))))
      (unless (e2e-wait (lambda () (string-match-p "a \\+ b" (e2e-text calc-buf))) 240)
        (error "calc.py buffer not changed: %s" (e2e-text calc-buf)))
      (e2e-emit "fixed" (e2e-text calc-buf))
      (unless (e2e-wait (lambda () (null (with-current-buffer test-buf eglot--diagnostics))) 60)
        (error "diagnostics not cleared"))
      (e2e-emit "cleared" t)
      (eglot-shutdown server))
  (error (e2e-emit "error" (error-message-string err))))
(kill-emacs 0)
