package python

import (
	"bytes"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var _ lang.Tracer = Language{}

// traceScript runs a module as `python -m` would (argv: trace file,
// module, the module's arguments) while recording each Python function
// that starts and the lines of it that run, and writes them at exit as
// lang.ParseSpansJSON reads them: a function's def line, then its runs of
// consecutive lines that ran. Lines matter in long functions: a
// 300-line method the failing test enters says little; the branch of it
// that ran says where (round 8: pyasn1's decoder). Only the standard
// library is used:
//   - 3.12+: PY_START and LINE callbacks of sys.monitoring that disable
//     themselves per function and per line after the first event (one
//     callback each). It takes tool id 4 or 3, which Python leaves
//     unassigned, so that a test's cProfile (PROFILER_ID), coverage.py
//     (COVERAGE_ID) or debugger still gets its own.
//   - Before 3.12 (or with both ids taken): sys.settrace (and
//     threading.settrace for threads started later) whose global function
//     records each code object that starts and returns a line tracer only
//     for frames of files under the root, so lines cost only in the
//     project's own code. A test that installs its own tracer (coverage.py,
//     a debugger) replaces this one from then on; a test's profiler
//     (cProfile) is separate and keeps working.
//
// At most 200000 line events are recorded. Kept: code objects that make a new scope
// (functions, methods, lambdas; not module or class bodies, whose import
// says little, nor comprehensions, which run inside a function already
// kept) whose file is under the directory the command started in and not
// under an installed package's (site-packages, dist-packages, .venv,
// node_modules, .tox, .nox). Subprocesses are not traced. The trace holds
// at most 50000 functions and line runs. Nothing is printed; the file is written by
// this process only (not a fork's child), in a finally block, so
// SystemExit (pytest's exit code) and exceptions pass through unchanged;
// a failed write is ignored.
const traceScript = `import sys, os, json, threading, runpy
def _fixpoint_trace():
    out, mod = sys.argv[1], sys.argv[2]
    del sys.argv[1:3]
    root = os.getcwd()
    out = os.path.join(root, out)
    if sys.path and sys.path[0] == '':
        sys.path[0] = root
    pid = os.getpid()
    seen = {}
    mon, tool = getattr(sys, 'monitoring', None), None
    for t in (4, 3):
        try:
            mon.use_tool_id(t, 'fixpoint-trace')
            tool = t
            break
        except Exception:
            pass
    lines, budget = {}, [200000]
    if tool is not None:
        def start(code, offset):
            seen[code] = 0
            return mon.DISABLE
        def line(code, ln):
            if budget[0] > 0:
                budget[0] -= 1
                lines.setdefault(code, set()).add(ln)
            return mon.DISABLE
        mon.register_callback(tool, mon.events.PY_START, start)
        mon.register_callback(tool, mon.events.LINE, line)
        mon.set_events(tool, mon.events.PY_START | mon.events.LINE)
    else:
        mine, sk = {}, ('site-packages', 'dist-packages', '.venv', 'node_modules', '.tox', '.nox')
        def local(frame, event, arg):
            if event == 'line' and budget[0] > 0:
                budget[0] -= 1
                lines.setdefault(frame.f_code, set()).add(frame.f_lineno)
            return local
        def glob(frame, event, arg):
            c = frame.f_code
            if c not in seen:
                seen[c] = 0
            k = mine.get(c.co_filename)
            if k is None:
                f = c.co_filename or '<'
                a = f if os.path.isabs(f) else os.path.join(root, f)
                k = f[0] != '<' and (a == root or a.startswith(root + os.sep)) and not any(x in a.split(os.sep) for x in sk)
                mine[c.co_filename] = k
            return local if k else None
        threading.settrace(glob)
        sys.settrace(glob)
    try:
        runpy.run_module(mod, run_name='__main__', alter_sys=True)
    finally:
        if tool is not None:
            try:
                mon.set_events(tool, 0)
                mon.free_tool_id(tool)
            except Exception:
                pass
        else:
            sys.settrace(None)
            threading.settrace(None)
        if os.getpid() == pid:
            try:
                skip = {'site-packages', 'dist-packages', '.venv', 'node_modules', '.tox', '.nox', '__pycache__'}
                files, n = {}, 0
                for c in list(seen):
                    f = c.co_filename
                    if n >= 50000 or not (c.co_flags & 2) or not f or f[0] == '<' or (c.co_name[:1] == '<' and c.co_name != '<lambda>'):
                        continue
                    f = f if os.path.isabs(f) else os.path.join(root, f)
                    r = os.path.relpath(os.path.normpath(f), root)
                    if r == '..' or r.startswith('..' + os.sep) or os.path.isabs(r) or skip.intersection(r.split(os.sep)):
                        continue
                    sp = files.setdefault(r.replace(os.sep, '/'), [])
                    sp.append([c.co_firstlineno, c.co_firstlineno, 0])
                    n += 1
                    run = None
                    for ln in sorted(lines.get(c, ())):
                        if run and ln == run[1] + 1:
                            run[1] = ln
                            continue
                        run = [ln, ln, 0]
                        sp.append(run)
                        n += 1
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with open(out, 'w') as fh:
                    json.dump({'files': files}, fh)
            except Exception:
                pass
_fixpoint_trace()
`

// TraceTests runs the tests SelectTests narrows pytest or unittest to
// under traceScript: the same interpreter, module and arguments, with the
// functions they ran written to lang.TracePath. Other runners (a
// configured command, a custom module) are not traced.
//
// Failures that are all pytest collection errors (a test module whose
// import raised: a name the fix is to add, round 9) are not traced: a
// traced run would only import the modules again, and functions that
// run at import say nothing the error's own traceback does not.
func (l Language) TraceTests(_ *sandbox.Snapshot, r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	if collectionErrorsOnly(tests) {
		return r, false
	}
	sel, ok := l.SelectTests(r, tests)
	if !ok || len(sel.Args) < 3 || sel.Args[1] != "-m" {
		return r, false
	}
	out := sel
	out.Args = append([]string{sel.Args[0], "-c", traceScript, lang.TracePath}, sel.Args[2:]...)
	out.TracePath = lang.TracePath
	return out, true
}

// ParseTrace reads traceScript's file: each function that ran, as a span
// of the line of its def, and the runs of its lines that ran, with count 0
// (not known: the tracer records a line's first run only).
// Python gives a decorated function's first decorator line; the span is
// moved to the def line that follows, which is the declaration's.
func (Language) ParseTrace(snap *sandbox.Snapshot, root string, data []byte) (lang.Trace, error) {
	tr, err := lang.ParseSpansJSON(snap, root, data, func(rel string) bool { return strings.HasSuffix(rel, ".py") })
	if err != nil {
		return nil, err
	}
	for rel, spans := range tr {
		src, err := snap.Read(rel)
		if err != nil {
			delete(tr, rel)
			continue
		}
		lines := bytes.Split(src, []byte("\n"))
		for i, s := range spans {
			d := defAfterDecorators(lines, s.From)
			spans[i].From, spans[i].To = d, max(s.To, d)
		}
		tr[rel] = slices.CompactFunc(spans, func(a, b lang.Span) bool { return a == b })
	}
	return tr, nil
}

// defAfterDecorators is the 1-based line of the def or class a decorator
// at line n belongs to, n itself when line n is no decorator.
func defAfterDecorators(lines [][]byte, n int) int {
	if n < 1 || n > len(lines) || !bytes.HasPrefix(bytes.TrimSpace(lines[n-1]), []byte("@")) {
		return n
	}
	for i := n; i < len(lines) && i < n+50; i++ {
		t := bytes.TrimSpace(lines[i])
		for _, kw := range []string{"def ", "async def ", "class "} {
			if bytes.HasPrefix(t, []byte(kw)) {
				return i + 1
			}
		}
	}
	return n
}

// collectionErrorsOnly reports whether every test of tests (at least
// one) is a pytest collection error: an error whose id is a test file's
// path, not a test's node id.
func collectionErrorsOnly(tests []testrun.Result) bool {
	for _, t := range tests {
		if t.Status != testrun.StatusError || !strings.HasSuffix(t.ID, ".py") || strings.Contains(t.ID, "::") {
			return false
		}
	}
	return len(tests) > 0
}
