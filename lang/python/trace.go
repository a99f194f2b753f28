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
// that starts, and writes them at exit as lang.ParseSpansJSON reads them.
// Only the standard library is used:
//   - 3.12+: a PY_START callback of sys.monitoring that disables itself
//     per function after its first call (one callback per function). It
//     takes tool id 4 or 3, which Python leaves unassigned, so that a
//     test's cProfile (PROFILER_ID), coverage.py (COVERAGE_ID) or debugger
//     still gets its own.
//   - Before 3.12 (or with both ids taken): a sys.setprofile function
//     (threading.setprofile for threads started later) that returns at
//     once on every event but "call" and looks the code object up in a
//     dict. A test that installs its own profiler (sys.setprofile,
//     cProfile) replaces this one from then on. Not cProfile, which costs
//     less per call: when a test enables and disables its own cProfile,
//     3.11 prints a SystemError at exit ("bad argument to internal
//     function") and loses the stats, which would change the run's stderr.
//
// No settrace: no per-line cost, and coverage.py or a debugger a test
// starts keeps its own hook. Kept: code objects that make a new scope
// (functions, methods, lambdas; not module or class bodies, whose import
// says little, nor comprehensions, which run inside a function already
// kept) whose file is under the directory the command started in and not
// under an installed package's (site-packages, dist-packages, .venv,
// node_modules, .tox, .nox). Subprocesses are not traced. The trace holds
// at most 50000 functions. Nothing is printed; the file is written by
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
    if tool is not None:
        def start(code, offset):
            seen[code] = 0
            return mon.DISABLE
        mon.register_callback(tool, mon.events.PY_START, start)
        mon.set_events(tool, mon.events.PY_START)
    else:
        def prof(frame, event, arg):
            if event == 'call':
                c = frame.f_code
                if c not in seen:
                    seen[c] = 0
        threading.setprofile(prof)
        sys.setprofile(prof)
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
            sys.setprofile(None)
            threading.setprofile(None)
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
                    files.setdefault(r.replace(os.sep, '/'), []).append([c.co_firstlineno, c.co_firstlineno, 0])
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
func (l Language) TraceTests(_ *sandbox.Snapshot, r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
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
// of the line of its def, with count 0 (not known: the tracer records a
// function's first call only).
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
