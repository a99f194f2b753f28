package node

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var _ lang.Tracer = Language{}

// coverageWrap runs a command (after its first three arguments: the merge
// script, the trace file, the JSON list of test files) with
// NODE_V8_COVERAGE pointed at a fresh directory under /tmp, so that every
// node process it starts (test files' child processes, worker threads)
// writes V8's precise function coverage there when it exits. Then node
// runs the merge script, silently and without the runner's NODE_OPTIONS,
// and the wrapper exits with the command's status: its output and report
// file are the command's own. A command killed by a signal exits 128+n, as
// a shell reports it. The dumps hold every script a process loaded (a few
// hundred KB per process, npm's own included) and stay in /tmp until the
// merge: a suite of many test files needs that much room there.
const coverageWrap = `m=$1 t=$2 f=$3; shift 3
d=/tmp/fixpoint-v8cov.$$
rm -rf "$d"; mkdir -p "$d" 2>/dev/null
NODE_V8_COVERAGE="$d" "$@"
rc=$?
NODE_OPTIONS= node -e "$m" "$d" "$t" "$f" >/dev/null 2>&1
rm -rf "$d"
exit $rc`

// mergeScript turns the coverage directory into the trace file
// (lang.ParseSpansJSON's format): for each script of a file:// URL under
// the working directory (the workspace as the command sees it) and not in
// node_modules, each function V8 counted as called, as its first line and
// call count (summed over processes). A process's file is read only when
// it loaded one of the test files given (node --test runs each test file
// in its own process, so the passing files' processes are left out, and
// so is a process a failing test starts, which loads no test file); an
// empty list keeps every process. Offsets are mapped to lines with the
// file on disk, and only when the script's top-level range spans exactly
// that file (a leading BOM allowed): a loader that transforms the source
// (TypeScript through tsx, babel, a wrapper) gives offsets into other text,
// and that file is left out rather than mapped wrongly. Bounded: files
// over 8 MiB are skipped and at most 200000 spans are written.
const mergeScript = `'use strict';
const fs = require('fs'), path = require('path'), url = require('url');
const [dir, out, list] = process.argv.slice(1);
const root = process.cwd(), want = new Set(JSON.parse(list || '[]'));
const files = new Map(), sources = new Map();
let spans = 0;
function rel(u) {
  if (typeof u !== 'string' || !u.startsWith('file://')) return null;
  let p; try { p = url.fileURLToPath(u); } catch { return null; }
  const r = path.relative(root, p);
  if (!r || r === '..' || r.startsWith('..' + path.sep) || path.isAbsolute(r)) return null;
  if (r.split(path.sep).includes('node_modules')) return null;
  return r.split(path.sep).join('/');
}
function source(r) {
  if (!sources.has(r)) {
    let s = null;
    try { const st = fs.statSync(path.join(root, r)); if (st.isFile() && st.size <= 8 << 20) s = fs.readFileSync(path.join(root, r), 'utf8'); } catch {}
    let starts = null;
    if (s !== null) { starts = [0]; for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 10) starts.push(i + 1); }
    sources.set(r, s === null ? null : { s, starts });
  }
  return sources.get(r);
}
function lineOf(starts, off) {
  let lo = 0, hi = starts.length - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= off) lo = mid; else hi = mid - 1; }
  return lo + 1;
}
function add(r, fns) {
  const src = source(r);
  if (!src || !Array.isArray(fns)) return;
  const top = fns.find(f => f && Array.isArray(f.ranges) && f.ranges[0] && f.ranges[0].startOffset === 0);
  if (!top) return;
  let shift = 0;
  const end = top.ranges[0].endOffset;
  if (end !== src.s.length) {
    if (src.s.charCodeAt(0) === 0xfeff && end === src.s.length - 1) shift = 1; else return;
  }
  for (const f of fns) {
    if (f === top || !f || !Array.isArray(f.ranges) || !f.ranges[0]) continue;
    const { startOffset, count } = f.ranges[0];
    if (!(count > 0) || !Number.isInteger(startOffset) || startOffset < 0 || startOffset >= end) continue;
    const line = lineOf(src.starts, startOffset + shift);
    let m = files.get(r);
    if (!m) { m = new Map(); files.set(r, m); }
    if (!m.has(line)) { if (spans >= 200000) continue; spans++; }
    m.set(line, Math.min((m.get(line) || 0) + count, 2147483647));
  }
}
let names = [];
try { names = fs.readdirSync(dir).filter(n => /^coverage-.*\.json$/.test(n)).sort(); } catch {}
for (const n of names) {
  let doc;
  try { doc = JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')); } catch { continue; }
  const scripts = (doc && Array.isArray(doc.result) ? doc.result : []).map(s => [rel(s && s.url), s]).filter(x => x[0]);
  if (want.size && !scripts.some(x => want.has(x[0]))) continue;
  for (const [r, s] of scripts) add(r, s.functions);
}
const o = {};
for (const [r, m] of files) o[r] = [...m].sort((a, b) => a[0] - b[0]).map(([l, c]) => [l, l, c]);
fs.mkdirSync(path.dirname(path.join(root, out)), { recursive: true });
fs.writeFileSync(path.join(root, out), JSON.stringify({ files: o }));
`

// TraceTests traces node --test and ava runs with V8's coverage
// (coverageWrap, mergeScript): node's built-ins only, nothing installed.
//   - node --test (node's own runner, directly or as the test script) is
//     not narrowed (see SelectTests): the whole suite runs, and only the
//     processes that loaded a failing test's file (Result.Package, read
//     from the TAP location) are kept, which is the failing files'
//     spectrum; a failing result without a file gives no trace.
//   - ava is narrowed as SelectTests narrows it (--match with the
//     titles). Its TAP names no file, so every worker's coverage is kept:
//     the other test files still load (their top-level code runs), but
//     none of their tests do. Checked by hand with ava 6.4.1 under bwrap
//     (its package is in no cache the tests can count on).
//
// Not traced: jest (it runs each module through its own vm wrapper and
// babel-jest's transform, so V8's offsets are not the file's), vitest
// (vite transforms every module, TypeScript or not: with vitest 1.6, V8
// reports a 206-byte lib.js under its file:// URL as 1694 characters;
// mergeScript's length check would drop it), mocha (every file
// runs in one process and SelectTests does not narrow it, so the trace
// would be the whole suite's), composed and unknown scripts.
func (l Language) TraceTests(_ *sandbox.Snapshot, r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	if len(tests) == 0 {
		return r, false
	}
	files := []string{}
	switch {
	case r.Name == RunnerAva || avaArgs(r.Args):
		sel, ok := l.SelectTests(r, tests)
		if !ok {
			return r, false
		}
		r = sel
	case nodeTestRunner(r):
		for _, t := range tests {
			f := t.Package
			if f == "" || strings.HasPrefix(f, "/") || strings.HasPrefix(f, "../") || strings.ContainsAny(f, "\n\x00") || !isSource(f) {
				return r, false
			}
			if f = path.Clean(f); !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	default:
		return r, false
	}
	list, err := json.Marshal(files)
	if err != nil {
		return r, false
	}
	out := r
	out.Args = append([]string{"sh", "-c", coverageWrap, "sh", mergeScript, lang.TracePath, string(list)}, r.Args...)
	out.TracePath = lang.TracePath
	return out, true
}

// nodeTestRunner reports whether r is node's own test runner as
// nodeRunner builds it: `node --test` with the TAP reporters, or the
// test script's node --test through npm (reporters given after "--" or in
// NODE_OPTIONS).
func nodeTestRunner(r testrun.Runner) bool {
	switch r.Name {
	case testrun.RunnerNode:
		return len(r.Args) > 1 && r.Args[0] == "node" && r.Args[1] == "--test"
	case testrun.RunnerNPM:
		return slices.Contains(r.Args, tapReporters[0]) || slices.Contains(r.Env, "NODE_OPTIONS="+tapReportersOption)
	}
	return false
}

// ParseTrace reads mergeScript's file: for each JavaScript source that
// ran, each called function as the span of its first line, with its call
// count.
func (Language) ParseTrace(snap *sandbox.Snapshot, root string, data []byte) (lang.Trace, error) {
	return lang.ParseSpansJSON(snap, root, data, isSource)
}
