#!/usr/bin/env bash
# capture.sh — regenerate docs/nvim-capture.txt: a real Neovim, inside tmux,
# runs `fixpoint serve` through this plugin on a copy of examples/go-bug,
# executes :FixpointFix, waits for the run to end, and captures the pane.
#
#   editors/nvim/capture.sh [OUT]      (default OUT: docs/nvim-capture.txt)
#
# Environment:
#   FIXPOINT_BIN             the binary to run (default: built from this checkout)
#   FIXPOINT_CAPTURE_SCRIPT  an agent/llmtest JSON script: starts llmtest-server
#                            and points FIXPOINT_BASE_URL at it. Without it, and
#                            without FIXPOINT_BASE_URL, the bundled scripted demo
#                            model (agent/demo, via ./capturemodel) answers.
#   FIXPOINT_CAPTURE_TIMEOUT seconds to wait for the run (default 300)
#   FIXPOINT_CAPTURE_KEYS    answer the plugin's own preview by typing these keys
#                            (e.g. "a" for Apply) instead of accepting it unseen
#   FIXPOINT_CAPTURE_PREVIEW a file for the capture of the preview, taken before the keys
#   FIXPOINT_CAPTURE_SCROLL  keys typed into the preview first (e.g. "G"), then
#   FIXPOINT_CAPTURE_SCROLLED a file for the capture of the scrolled preview
#   FIXPOINT_CAPTURE_ROWS    the pane's height (default 32)
#   FIXPOINT_CAPTURE_NOMODEL set: no model at all (a first run: the server's demo
#                            model and its banner), FIXPOINT_BASE_URL ignored
#   FIXPOINT_CAPTURE_UNTIL   grep -E patterns, one per line: capture as soon as the
#                            pane shows every one of them, and end (exit 0)
#   FIXPOINT_CAPTURE_CMDHEIGHT Neovim's cmdheight (default 2; 1 is the default of Neovim)
#
# Needs nvim (0.7+), tmux and go. Exits 1 when the run does not end in time
# or ends unverified (the capture is still written, for inspection).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$repo/docs/nvim-capture.txt}
timeout=${FIXPOINT_CAPTURE_TIMEOUT:-300}
work=$(mktemp -d)
sock=fixpoint-capture-$$
llm_pid=
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  if [ -n "$llm_pid" ]; then kill "$llm_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

for tool in nvim tmux go; do
  command -v "$tool" >/dev/null || { echo "capture.sh: $tool is not installed" >&2; exit 2; }
done

bin=${FIXPOINT_BIN:-}
if [ -z "$bin" ]; then
  (cd "$repo" && go build -o "$work/fixpoint" ./cmd/fixpoint)
  bin=$work/fixpoint
fi

# The model servers run until their stdin closes: hold a FIFO open on fd 9
# for as long as this script lives.
mkfifo "$work/hold"
exec 9<>"$work/hold"
if [ -n "${FIXPOINT_CAPTURE_SCRIPT:-}" ]; then
  (cd "$repo" && go build -o "$work/llmtest-server" ./cmd/llmtest-server)
  mkfifo "$work/llm.out"
  "$work/llmtest-server" --script "$FIXPOINT_CAPTURE_SCRIPT" >"$work/llm.out" 2>"$work/llm.err" <"$work/hold" &
  llm_pid=$!
  read -r url <"$work/llm.out"
  export FIXPOINT_BASE_URL=$url FIXPOINT_MODEL=${FIXPOINT_MODEL:-scripted}
elif [ -n "${FIXPOINT_CAPTURE_NOMODEL:-}" ]; then
  unset FIXPOINT_BASE_URL FIXPOINT_MODEL
elif [ -z "${FIXPOINT_BASE_URL:-}" ]; then
  (cd "$repo" && go build -o "$work/capturemodel" ./editors/nvim/capturemodel)
  mkfifo "$work/llm.out"
  "$work/capturemodel" >"$work/llm.out" 2>"$work/llm.err" <"$work/hold" &
  llm_pid=$!
  { read -r url; read -r model; } <"$work/llm.out"
  export FIXPOINT_BASE_URL=$url FIXPOINT_MODEL=$model
fi

cp -r "$repo/examples/go-bug" "$work/project"
# The user trusts the folder they open (fixpoint trust), as a user of an
# editor without workspace trust does once: the server then prepares it.
"$bin" trust "$work/project" >/dev/null
status_file=$work/status
# Unattended: accept the previewed edit as a user pressing "Apply" would.
# With FIXPOINT_CAPTURE_KEYS the plugin's own preview is used, and the keys
# are typed into the pane when its statusline says "a: Apply".
confirm_hook='confirm = function(_, _, on_choice) on_choice(true) end,'
[ -n "${FIXPOINT_CAPTURE_KEYS:-}" ] && confirm_hook=''
cat >"$work/init.lua" <<EOF
vim.opt.runtimepath:prepend("$repo/editors/nvim")
vim.o.laststatus = 2
vim.o.cmdheight = ${FIXPOINT_CAPTURE_CMDHEIGHT:-2}
vim.o.statusline = "%f %m%=%{luaeval('require(\"fixpoint\").status()')} "
vim.o.shortmess = vim.o.shortmess .. "F"
local fp = require("fixpoint")
local started = false
fp.setup({
  cmd = { "$bin", "serve" },
  $confirm_hook
  on_attach = function()
    if started then return end
    started = true
    vim.defer_fn(function() vim.cmd("FixpointFix") end, 500)
  end,
})
vim.api.nvim_create_autocmd("User", {
  pattern = "FixpointStatus",
  callback = function()
    local s = fp.status_table()
    if s.kind == "verified" or s.kind == "failed" or s.kind == "not-applied" then
      -- Let workspace/applyEdit land, then show the function that changed.
      vim.defer_fn(function()
        vim.fn.search("^func Median")
        vim.cmd("normal! zt")
        vim.fn.writefile({ s.kind, s.message or "" }, "$status_file")
      end, 1500)
    end
  end,
})
EOF

# 9<&-: the tmux server (and so nvim and fixpoint serve) need not hold the FIFO.
tmux -L "$sock" new-session -d -s capture -x 100 -y "${FIXPOINT_CAPTURE_ROWS:-32}" \
  "cd '$work/project' && nvim -i NONE -u '$work/init.lua' stats/stats.go" 9<&-

keys=${FIXPOINT_CAPTURE_KEYS:-}
mkdir -p "$(dirname "$out")"
until_ok() {
  [ -n "${FIXPOINT_CAPTURE_UNTIL:-}" ] || return 1
  local screen pat
  screen=$(tmux -L "$sock" capture-pane -p -t capture)
  while IFS= read -r pat; do
    [ -z "$pat" ] && continue
    grep -qE -- "$pat" <<<"$screen" || return 1
  done <<<"$FIXPOINT_CAPTURE_UNTIL"
}
for _ in $(seq "$timeout"); do
  [ -s "$status_file" ] && break
  if until_ok; then
    tmux -L "$sock" capture-pane -p -t capture >"$out"
    echo "capture.sh: wrote $out (the screen shows what FIXPOINT_CAPTURE_UNTIL asks)" >&2
    exit 0
  fi
  # The plugin's preview says "a: Apply" in its statusline (a confirm hook's prompt "(A)pply").
  if [ -n "$keys" ] && tmux -L "$sock" capture-pane -p -t capture | grep -qE 'a: Apply|\(A\)pply'; then
    [ -n "${FIXPOINT_CAPTURE_PREVIEW:-}" ] && tmux -L "$sock" capture-pane -p -t capture >"$FIXPOINT_CAPTURE_PREVIEW"
    if [ -n "${FIXPOINT_CAPTURE_SCROLL:-}" ]; then
      tmux -L "$sock" send-keys -t capture "$FIXPOINT_CAPTURE_SCROLL"
      sleep 1
      [ -n "${FIXPOINT_CAPTURE_SCROLLED:-}" ] && tmux -L "$sock" capture-pane -p -t capture >"$FIXPOINT_CAPTURE_SCROLLED"
    fi
    tmux -L "$sock" send-keys -t capture "$keys"
    keys=
  fi
  sleep 1
done
sleep 1
mkdir -p "$(dirname "$out")"
tmux -L "$sock" capture-pane -p -t capture >"$out"
echo "capture.sh: wrote $out" >&2
if [ ! -s "$status_file" ]; then
  echo "capture.sh: the run did not end within ${timeout}s" >&2
  exit 1
fi
kind=$(head -1 "$status_file")
echo "capture.sh: run ended: $(tr '\n' ' ' <"$status_file")" >&2
[ "$kind" = verified ]
