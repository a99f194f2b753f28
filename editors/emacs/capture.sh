#!/usr/bin/env bash
# capture.sh — a real Emacs 28 (terminal, inside tmux) with eglot 1.9 and
# fixpoint.el runs `fixpoint serve` on a copy of examples/go-bug in go-mode:
# M-x fixpoint-fix-tests, the *fixpoint diff* preview and its y/n question
# (answered y), then the applied fix. Writes OUT-preview.txt and
# OUT-applied.txt (tmux capture-pane text).
#
#   editors/emacs/capture.sh OUT      (e.g. docs/screens/emacs)
#
# Environment: FIXPOINT_BIN (default: built from this checkout),
# FIXPOINT_CAPTURE_TIMEOUT (seconds, default 300). The bundled scripted demo
# model answers (./editors/nvim/capturemodel), as in the Neovim capture.
# Needs emacs, elpa-eglot, elpa-go-mode, tmux and go.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: capture.sh OUT}
timeout=${FIXPOINT_CAPTURE_TIMEOUT:-300}
work=$(mktemp -d)
sock=fixpoint-emacs-capture-$$
llm_pid=
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  if [ -n "$llm_pid" ]; then kill "$llm_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
bin=${FIXPOINT_BIN:-}
if [ -z "$bin" ]; then
  (cd "$repo" && go build -o "$work/fixpoint" ./cmd/fixpoint)
  bin=$work/fixpoint
fi
mkfifo "$work/hold" "$work/llm.out"
exec 9<>"$work/hold"
(cd "$repo" && go build -o "$work/capturemodel" ./editors/nvim/capturemodel)
"$work/capturemodel" >"$work/llm.out" 2>"$work/llm.err" <"$work/hold" &
llm_pid=$!
{ read -r url; read -r model; } <"$work/llm.out"
export FIXPOINT_BASE_URL=$url FIXPOINT_MODEL=$model
cp -r "$repo/examples/go-bug" "$work/project"
# A repository, as a user's project is (project.el finds its root by it),
# which the user trusts once (fixpoint trust).
git -C "$work/project" init -q
"$bin" trust "$work/project" >/dev/null
gomode=$(ls -d /usr/share/emacs/site-lisp/elpa/go-mode-* | head -1)
cat >"$work/init.el" <<EOF
(dolist (d '("/usr/share/emacs/site-lisp/elpa/eglot-1.9" "/usr/share/emacs/site-lisp/elpa/project-0.8.1"
             "/usr/share/emacs/site-lisp/elpa/xref-1.6.0" "/usr/share/emacs/site-lisp/elpa/seq-2.23"
             "$gomode" "$repo/editors/emacs"))
  (add-to-list 'load-path d))
(require 'go-mode)
(require 'fixpoint)
(setq fixpoint-program '("$bin" "serve") inhibit-startup-screen t)
(fixpoint-eglot-setup)
(add-hook 'go-mode-hook #'eglot-ensure)
(add-hook 'eglot-managed-mode-hook
          (lambda () (when (eglot-managed-p) (run-at-time 1 nil #'fixpoint-fix-tests))))
EOF
tmux -L "$sock" new-session -d -s capture -x 100 -y 32 \
  "cd '$work/project' && emacs -nw -Q -l '$work/init.el' stats/stats.go" 9<&-
mkdir -p "$(dirname "$out")"
answered=
for _ in $(seq "$timeout"); do
  screen=$(tmux -L "$sock" capture-pane -p -t capture)
  if [ -z "$answered" ] && grep -q 'fixpoint: apply .*(y or n)' <<<"$screen"; then
    printf '%s\n' "$screen" >"$out-preview.txt"
    tmux -L "$sock" send-keys -t capture y
    answered=1
  elif [ -n "$answered" ] && grep -q 'fixpoint: applied' <<<"$screen"; then
    sleep 1
    tmux -L "$sock" capture-pane -p -t capture >"$out-applied.txt"
    echo "capture.sh: wrote $out-preview.txt and $out-applied.txt" >&2
    exit 0
  fi
  sleep 1
done
tmux -L "$sock" capture-pane -p -t capture >"$out-timeout.txt"
echo "capture.sh: the run did not end within ${timeout}s (screen in $out-timeout.txt)" >&2
exit 1
