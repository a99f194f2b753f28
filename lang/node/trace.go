package node

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
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
// and that file is left out rather than mapped wrongly, unless the
// transformed script has a source map: node records it in the dump
// ("source-map-cache", with the generated lines' lengths) whenever
// NODE_V8_COVERAGE is set, for tsc's .js.map files and the inline maps of
// ts-node, tsx and babel's require hooks. Then a function is counted at
// the original line of the mapping segment that starts exactly where the
// function starts (a transform's helpers have none, or one that points
// elsewhere), in the map's source when that is a file under the working
// directory, outside node_modules. Bounded: files and mappings over 8 MiB
// are skipped and at most 200000 spans are written.
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
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function decode(mappings) {
  const lines = [];
  let seg = [], line = [], v = 0, sh = 0, gc = 0, si = 0, sl = 0, sc = 0, ni = 0;
  const flush = () => {
    if (seg.length) {
      gc += seg[0];
      if (seg.length >= 4) { si += seg[1]; sl += seg[2]; sc += seg[3]; line.push([gc, si, sl]); }
      if (seg.length >= 5) ni += seg[4];
    }
    seg = [];
  };
  for (let i = 0; i < mappings.length; i++) {
    const c = mappings[i];
    if (c === ',') { flush(); continue; }
    if (c === ';') { flush(); lines.push(line); line = []; gc = 0; continue; }
    const d = B64.indexOf(c);
    if (d < 0) return null;
    v += (d & 31) << sh;
    if (d & 32) { sh += 5; if (sh > 30) return null; continue; }
    seg.push(v & 1 ? -(v >>> 1) : v >>> 1);
    v = 0; sh = 0;
  }
  flush(); lines.push(line);
  return lines;
}
const maps = new Map();
function sourceMap(u, entry) {
  if (maps.has(u)) return maps.get(u);
  let m = null;
  try {
    const d = entry && entry.data, ll = entry && entry.lineLengths;
    if (d && typeof d.mappings === 'string' && d.mappings.length <= 8 << 20 && Array.isArray(d.sources) && Array.isArray(ll)) {
      const lines = decode(d.mappings);
      const base = typeof entry.url === 'string' && entry.url.startsWith('file://') ? entry.url : u;
      const root = typeof d.sourceRoot === 'string' && d.sourceRoot ? d.sourceRoot.replace(/\/?$/, '/') : '';
      const srcs = d.sources.map(s => {
        if (typeof s !== 'string') return null;
        try { return rel(path.isAbsolute(root + s) ? url.pathToFileURL(root + s).href : new URL(root + s, base).href); } catch { return null; }
      });
      const starts = [0];
      for (const n of ll) starts.push(starts[starts.length - 1] + (Number(n) || 0) + 1);
      if (lines) m = { lines, srcs, starts };
    }
  } catch {}
  maps.set(u, m);
  return m;
}
function mapped(m, off) {
  const g = lineOf(m.starts, off) - 1, col = off - m.starts[g];
  const segs = m.lines[g];
  if (!segs) return null;
  const best = segs.find(s => s[0] === col);
  if (!best || !m.srcs[best[1]] || !(best[2] >= 0)) return null;
  return [m.srcs[best[1]], best[2] + 1];
}
function count(r, line, n) {
  let m = files.get(r);
  if (!m) { m = new Map(); files.set(r, m); }
  if (!m.has(line)) { if (spans >= 200000) return; spans++; }
  m.set(line, Math.min((m.get(line) || 0) + n, 2147483647));
}
function addMapped(m, fns) {
  if (!Array.isArray(fns)) return;
  for (const f of fns) {
    if (!f || !Array.isArray(f.ranges) || !f.ranges[0]) continue;
    const { startOffset, count: n } = f.ranges[0];
    if (!(n > 0) || !Number.isInteger(startOffset) || startOffset <= 0) continue;
    const at = mapped(m, startOffset);
    if (at && source(at[0])) count(at[0], at[1], n);
  }
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
    const { startOffset, count: n } = f.ranges[0];
    if (!(n > 0) || !Number.isInteger(startOffset) || startOffset < 0 || startOffset >= end) continue;
    count(r, lineOf(src.starts, startOffset + shift), n);
  }
}
let names = [];
try { names = fs.readdirSync(dir).filter(n => /^coverage-.*\.json$/.test(n)).sort(); } catch {}
for (const n of names) {
  let doc;
  try { doc = JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')); } catch { continue; }
  const scripts = (doc && Array.isArray(doc.result) ? doc.result : []).map(s => [rel(s && s.url), s]).filter(x => x[0]);
  if (want.size && !scripts.some(x => want.has(x[0]))) continue;
  const cache = doc['source-map-cache'] && typeof doc['source-map-cache'] === 'object' ? doc['source-map-cache'] : {};
  for (const [r, s] of scripts) {
    const m = Object.prototype.hasOwnProperty.call(cache, s.url) ? sourceMap(s.url, cache[s.url]) : null;
    if (m) addMapped(m, s.functions); else add(r, s.functions);
  }
}
const o = {};
for (const [r, m] of files) o[r] = [...m].sort((a, b) => a[0] - b[0]).map(([l, c]) => [l, l, c]);
fs.mkdirSync(path.dirname(path.join(root, out)), { recursive: true });
fs.writeFileSync(path.join(root, out), JSON.stringify({ files: o }));
`

// c8OrV8 runs a command (after its first six arguments: istanbulWrap,
// istanbulStore, coverageWrap, mergeScript, the trace file and the JSON
// list of test files) under the project's c8 when node_modules has it
// (istanbulWrap "c8"), else under coverageWrap.
const c8OrV8 = `iw=$1 is=$2 cw=$3 ms=$4 t=$5 f=$6; shift 6
if [ -f node_modules/c8/package.json ]; then exec sh -c "$iw" sh c8 "$t" "$is" "$@"; fi
exec sh -c "$cw" sh "$ms" "$t" "$f" "$@"`

// istanbulWrap runs a jest, vitest or mocha command (after its first
// three arguments: the runner, "jest", "vitest" or "c8", the trace file and
// istanbulStore) with the runner's own coverage: istanbul's json reporter
// writes coverage-final.json into istanbulDir, in the original source's
// line numbers (the runner maps its transformed modules back), and
// istanbulStore copies it into the trace file (see parseIstanbul). It
// exits with the command's status. A coverage threshold the project
// configured is set to none for jest (jest would fail the run for it); a
// vitest threshold is checked after the report is written and only adds
// its message. vitest's coverage needs a provider package the project
// installed (@vitest/coverage-v8, else @vitest/coverage-istanbul, in
// node_modules: nothing is installed); without one the command runs as
// it is and writes no trace, which the agent warns about as for any
// tracer. "c8" runs the command under the project's own c8 (mocha with a
// transform: c8 maps V8's coverage back through the transform's source
// maps), with no threshold check; without c8 installed, as it is.
//
// v8-to-istanbul before 9 (jest 27-29's coverageProvider "v8", older c8)
// maps through source-map 0.7, which takes node 18+'s global fetch for a
// browser's and throws "You must provide the URL of lib/mappings.wasm":
// the runner writes no coverage. When node_modules holds that version,
// the command runs with fetch turned off (--no-experimental-fetch in
// NODE_OPTIONS, when the node accepts it): the traced run only, which
// decides nothing, so a test that needs fetch fails there alone.
const istanbulWrap = `k=$1 t=$2 s=$3; shift 3
d=` + istanbulDir + `
rm -rf "$d"
for f in node_modules/v8-to-istanbul/package.json node_modules/*/node_modules/v8-to-istanbul/package.json node_modules/@*/*/node_modules/v8-to-istanbul/package.json; do
  if grep -qs '"source-map": *"[~^]*0\.7\.' "$f" && node --no-experimental-fetch -e 0 >/dev/null 2>&1; then
    NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--no-experimental-fetch"; export NODE_OPTIONS; break
  fi
done
case $k in
jest) set -- "$@" --coverage --coverageReporters=json "--coverageDirectory=$d" "--coverageThreshold={}" ;;
vitest)
  p=
  if [ -f node_modules/@vitest/coverage-v8/package.json ]; then p=v8
  elif [ -f node_modules/@vitest/coverage-istanbul/package.json ]; then p=istanbul; fi
  if [ -n "$p" ]; then set -- "$@" --coverage.enabled=true "--coverage.provider=$p" --coverage.reporter=json "--coverage.reportsDirectory=$d" --coverage.reportOnFailure=true --coverage.all=false --coverage.clean=true; fi ;;
c8) if [ -f node_modules/c8/package.json ]; then set -- node node_modules/c8/bin/c8.js --reporter=json "--report-dir=$d" "--temp-directory=$d/tmp" --check-coverage=false "$@"; fi ;;
esac
"$@"
rc=$?
NODE_OPTIONS= node -e "$s" "$d/coverage-final.json" "$t" >/dev/null 2>&1
rm -rf "$d"
exit $rc`

// istanbulStore is istanbulWrap's last step: the coverage map, a regular
// file within the trace size limit, is stored as it is in the trace file
// with the directory the command ran in (the paths' root as the command
// saw them: bwrap's workspace is /workspace inside, a host directory
// outside), as {"cwd": ..., "istanbul": map}.
var istanbulStore = `'use strict';
const fs = require('fs'), path = require('path');
const [src, out] = process.argv.slice(1);
const st = fs.lstatSync(src);
if (st.isFile() && st.size <= ` + maxTraceBytesJS + ` - 8192) {
  const raw = fs.readFileSync(src, 'utf8');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, '{"cwd":' + JSON.stringify(process.cwd()) + ',"` + istanbulKey + `":' + raw + '}');
}
`

// maxTraceBytesJS is lang.MaxTraceBytes as a JavaScript literal (less
// room for the cwd in istanbulStore).
var maxTraceBytesJS = strconv.Itoa(lang.MaxTraceBytes)

// istanbulDir is where istanbulWrap has the runner write its coverage:
// outside the workspace, removed before and after.
const istanbulDir = "/tmp/fixpoint-istanbul"

// TraceTests traces node --test, ava and mocha runs with V8's coverage
// (coverageWrap, mergeScript: node's built-ins only, nothing installed),
// and jest and vitest runs with their own (istanbulWrap, parseIstanbul).
//
//   - node --test (node's own runner, directly or as the test script) is
//     not narrowed (see SelectTests): the whole suite runs, and only the
//     processes that loaded a failing test's file (Result.Package, read
//     from the TAP location) are kept, which is the failing files'
//     spectrum; when a failing result names no file (node 18's TAP has
//     no location), every process is kept: the whole suite's spectrum.
//
//   - ava is narrowed as SelectTests narrows it (--match with the
//     titles). Its TAP names no file, so every worker's coverage is kept:
//     the other test files still load (their top-level code runs), but
//     none of their tests do. Checked by hand with ava 6.4.1 under bwrap
//     (its package is in no cache the tests can count on).
//
//   - mocha is narrowed as SelectTests narrows it (--grep with the full
//     titles): every test file still loads in mocha's one process, but
//     only the failing tests run. V8's offsets are the file's only for
//     untransformed JavaScript, so a project whose mocha loads a
//     transform (ts-node, @babel/register, tsx, ...: mochaTransform) is
//     traced through the project's own c8 (istanbulWrap), or without
//     c8 in its node_modules through the transform's source maps
//     (c8OrV8, mergeScript); mergeScript's length check drops any other
//     transformed file.
//
//   - jest and vitest are narrowed as SelectTests narrows them (the
//     failing test files) and run with their coverage (istanbulWrap):
//     their modules are transformed (jest's vm wrapper and babel-jest,
//     vite), so V8's raw offsets are not the file's, but their istanbul
//     maps are in the source's lines. Every module the failing files
//     load is in the map (the project's collectCoverageFrom, when set,
//     narrows it; coverageProvider "v8" gives the same map). vitest
//     needs a coverage provider in node_modules.
//
//   - a composed test script (`npm run lint && npm run test-cov`,
//     `standard && tape test.js`, `nyc mocha`) or a configured command
//     that chooses its own reporter has its runner step run alone
//     (step.go, traceStep): jest, vitest, mocha and ava as above; tape,
//     tap and node test files whole, under V8's coverage.
//
//   - mocha with a transform and no c8 installed: V8's coverage mapped
//     back through the transform's source maps (mergeScript).
//
// Not traced: scripts with no runner step testStep reads (a wrapper tool
// such as ts-scripts, pipes, substitutions).
func (l Language) TraceTests(snap *sandbox.Snapshot, r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	if len(tests) == 0 {
		return r, false
	}
	if !nodeTestRunner(r) {
		if st, ok := scriptStepOf(snap, r); ok {
			return l.traceStep(snap, st, r, tests)
		}
	}
	files := []string{}
	switch {
	case r.Name == testrun.RunnerJest || r.Name == testrun.RunnerVitest:
		sel, ok := l.SelectTests(r, tests)
		if !ok {
			return r, false
		}
		out := sel
		out.Args = append([]string{"sh", "-c", istanbulWrap, "sh", r.Name, lang.TracePath, istanbulStore}, sel.Args...)
		out.TracePath = lang.TracePath
		return out, true
	case r.Name == testrun.RunnerMocha:
		sel, ok := l.SelectTests(r, tests)
		if !ok {
			return r, false
		}
		if mochaTransform(snap) {
			// the project's c8, else V8's coverage mapped through the
			// transform's source maps (mergeScript)
			out := sel
			out.Args = append([]string{"sh", "-c", c8OrV8, "sh", istanbulWrap, istanbulStore, coverageWrap, mergeScript, lang.TracePath, "[]"}, sel.Args...)
			out.TracePath = lang.TracePath
			return out, true
		}
		r = sel
	case r.Name == RunnerAva || avaArgs(r.Args):
		sel, ok := l.SelectTests(r, tests)
		if !ok {
			return r, false
		}
		r = sel
	case nodeTestRunner(r):
		for _, t := range tests {
			f := t.Package
			if f == "" {
				files = []string{} // node 18's TAP names no file: every process is kept
				break
			}
			if strings.HasPrefix(f, "/") || strings.HasPrefix(f, "../") || strings.ContainsAny(f, "\n\x00") || !isSource(f) {
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

// traceStep traces the runner step st of whole, a composed test script or a
// configured command (step.go): jest, vitest, mocha and ava as their own
// runners are traced (narrowed, with their coverage), anything else
// (tape, tap, node) whole under V8's coverage (coverageWrap, mapped
// through source maps where the files have them), keeping the processes
// that loaded a failing test's file when the results name the files
// (tape's and tap's TAP do not: every process is kept).
//
// The step runs with whole's environment (the configured [test] env,
// which wins over the script's own assignments) and repository (Git).
func (l Language) traceStep(snap *sandbox.Snapshot, st step, whole testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	r := stepRunner(st)
	r.Env = append(slices.DeleteFunc(r.Env, func(e string) bool {
		k, _, _ := strings.Cut(e, "=")
		return slices.ContainsFunc(whole.Env, func(w string) bool { return strings.HasPrefix(w, k+"=") })
	}), whole.Env...)
	r.Git = whole.Git
	if r.Name != "" {
		return l.TraceTests(snap, r, tests)
	}
	files := []string{}
	for _, t := range tests {
		f := t.Package
		if f == "" || strings.HasPrefix(f, "/") || strings.HasPrefix(f, "../") || strings.ContainsAny(f, "\n\x00") || !isSource(f) {
			files = []string{}
			break
		}
		if f = path.Clean(f); !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	list, err := json.Marshal(files)
	if err != nil {
		return r, false
	}
	out := r
	out.Name = testrun.RunnerNode
	out.Args = append([]string{"sh", "-c", coverageWrap, "sh", mergeScript, lang.TracePath, string(list)}, r.Args...)
	out.TracePath = lang.TracePath
	return out, true
}

// mochaTransforms are the require hooks and loaders that compile test and
// source files as mocha loads them: V8's coverage of a compiled file is
// not in the file's offsets.
var mochaTransforms = []string{"ts-node", "@babel/register", "babel-register", "tsx", "esbuild-register", "@swc/register", "@swc-node/register", "sucrase", "esm", "coffeescript", "coffee-script", "@esbuild-kit"}

// mochaTransform reports whether the project's mocha may load a transform:
// one of mochaTransforms named in package.json (its test script or
// "mocha" key) or in a mocha configuration file, as a word of its own
// (a quoted name or a flag's value). A snapshot that cannot be read
// counts as one.
func mochaTransform(snap *sandbox.Snapshot) bool {
	if snap == nil {
		return true
	}
	for _, name := range []string{"package.json", ".mocharc", ".mocharc.js", ".mocharc.cjs", ".mocharc.mjs", ".mocharc.json", ".mocharc.jsonc", ".mocharc.yml", ".mocharc.yaml", "test/mocha.opts"} {
		text, ok := snap.Text(name)
		if !ok {
			continue
		}
		for _, w := range strings.FieldsFunc(text, func(r rune) bool {
			return !(r == '@' || r == '/' || r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			for _, t := range mochaTransforms {
				if w == t || strings.HasPrefix(w, t+"/") {
					return true
				}
			}
		}
	}
	return false
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

// ParseTrace reads the trace file: istanbulWrap's coverage map
// ({"istanbul": ...}, parseIstanbul) or else mergeScript's spans: for
// each JavaScript source that ran, each called function as the span of
// its first line, with its call count.
func (Language) ParseTrace(snap *sandbox.Snapshot, root string, data []byte) (lang.Trace, error) {
	if len(data) > lang.MaxTraceBytes {
		return nil, fmt.Errorf("trace of %d bytes is over the %d-byte limit", len(data), lang.MaxTraceBytes)
	}
	var doc struct {
		Cwd      string          `json:"cwd"`
		Istanbul json.RawMessage `json:"istanbul"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	if doc.Istanbul != nil {
		// The file's cwd is as untrusted as its paths: it only decides
		// which absolute names stand for workspace files, and TraceRel
		// keeps those to regular files of snap, as a relative name could
		// name them anyway.
		if path.IsAbs(doc.Cwd) {
			root = doc.Cwd
		}
		return parseIstanbul(snap, root, doc.Istanbul)
	}
	return lang.ParseSpansJSON(snap, root, data, traceSource)
}
