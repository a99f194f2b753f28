package sandboxtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Conformance is the contract every sandbox backend keeps, run against b
// from the backend package's own tests (sandbox/host, sandbox/bwrap,
// sandbox/docker): the same cases on every backend, so that a test
// result means the same wherever it ran. spec is the backend's base spec
// (its image, for docker); each case sets its own limits. The cases:
// exit codes and both streams, stdin, the timeout, Sync (also of deletions),
// what enters the workspace (SnapshotFidelity), and test results parsed in
// full past the output cap, on stdout and stderr and from a large report
// file. isSecret is the secret-file rule the snapshot applies (the
// caller passes agent/redact.IsSecretPath: sandbox packages do not import
// agent).
func Conformance(t *testing.T, b sandbox.Backend, spec sandbox.Spec, isSecret func(rel string) bool) {
	t.Helper()
	cases := []struct {
		name string
		run  func(*testing.T, sandbox.Backend, sandbox.Spec)
	}{
		{"ExitCodeAndStreams", exitCodeAndStreams},
		{"Stdin", stdin},
		{"Timeout", timeout},
		{"SyncDeletes", syncDeletes},
		{"ModTimes", modTimes},
		{"Localhost", localhost},
		{"SnapshotFidelity", func(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
			spec.Limits = sandbox.Limits{Timeout: 30 * time.Second}
			SnapshotFidelity(t, b, spec, isSecret)
		}},
		{"LongOutputParsedInFull", longOutputParsedInFull},
		{"LongStderrParsedInFull", longStderrParsedInFull},
		{"BigReportReadInFull", bigReportReadInFull},
	}
	if _, ok := b.(sandbox.Installer); ok { // backends with a setup phase
		cases = append(cases, struct {
			name string
			run  func(*testing.T, sandbox.Backend, sandbox.Spec)
		}{"WritableCacheLayer", writableCacheLayer})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, b, spec) })
	}
}

// writableCacheLayer: the entries of an installed cache named writable
// (node_modules/.cache, .vite-temp) take writes in a test run, as natively
// (vite and eslint --cache write there), while the rest of the cache stays
// read-only; what was written is gone in the next session; and what the
// install left at those names (a symlink out, a file) is replaced by a
// directory, so the layer never lands outside the cache.
func writableCacheLayer(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	spec.Limits = sandbox.Limits{Timeout: 2 * time.Minute}
	key := fmt.Sprintf("c0de%012x", time.Now().UnixNano()&0xffffffffffff)
	project := "c0ffee" + strings.Repeat("0", 10)
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{"package.json": {Data: []byte("{}\n")}}}
	inst, err := b.(sandbox.Installer).Install(t.Context(), sandbox.InstallSpec{
		Image: spec.Image, Key: key, Snapshot: snap, Labels: map[string]string{sandbox.LabelProject: project},
		Script: "mkdir -p node_modules/dep && echo dep > node_modules/dep/index.js && ln -s /etc node_modules/.cache && echo stale > node_modules/.vite-temp",
		Caches: []sandbox.CacheDir{{Name: "node_modules", Target: "/workspace/node_modules", Writable: []string{".cache", ".vite-temp"}}},
		Limits: spec.Limits,
	})
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	spec.Caches = append(spec.Caches, inst.Mounts...)
	sess := start(t, b, spec)
	syncFiles(t, sess, map[string]string{"package.json": "{}\n"})
	script := `set -e
cat node_modules/dep/index.js
test ! -L node_modules/.cache
mkdir -p node_modules/.cache/eslint && echo cached > node_modules/.cache/eslint/x
echo bundled > node_modules/.vite-temp/vite.config.mjs
cat node_modules/.cache/eslint/x node_modules/.vite-temp/vite.config.mjs
if touch node_modules/dep/new 2>/dev/null || touch node_modules/new 2>/dev/null; then echo "cache writable"; fi
`
	res := run(t, sess, sandbox.Command{Args: []string{"sh", "-c", script}, Limits: spec.Limits})
	if res.ExitCode != 0 || string(res.Stdout) != "dep\ncached\nbundled\n" {
		t.Fatalf("writes into node_modules/.cache and .vite-temp: exit %d, stdout %q, stderr %q; want dep, cached, bundled", res.ExitCode, res.Stdout, res.Stderr)
	}
	again := start(t, b, spec)
	syncFiles(t, again, map[string]string{"package.json": "{}\n"})
	res = run(t, again, sandbox.Command{Args: []string{"sh", "-c", "ls -A node_modules/.cache node_modules/.vite-temp"}, Limits: spec.Limits})
	if res.ExitCode != 0 || strings.Join(strings.Fields(string(res.Stdout)), " ") != "node_modules/.cache: node_modules/.vite-temp:" {
		t.Errorf("a new session's writable layers: exit %d, stdout %q, stderr %q; want both empty", res.ExitCode, res.Stdout, res.Stderr)
	}
}

func start(t *testing.T, b sandbox.Backend, spec sandbox.Spec) sandbox.Session {
	t.Helper()
	s, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func syncFiles(t *testing.T, sess sandbox.Session, files map[string]string) *sandbox.Snapshot {
	t.Helper()
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for name, text := range files {
		snap.Files[name] = sandbox.File{Data: []byte(text)}
	}
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return snap
}

func run(t *testing.T, sess sandbox.Session, c sandbox.Command) *sandbox.Result {
	t.Helper()
	res, err := sess.Run(t.Context(), c)
	if err != nil {
		t.Fatalf("Run(%q): %v", c.Args, err)
	}
	return res
}

// exitCodeAndStreams: a failing command is a Result, not an error, with
// its exit code and each stream apart.
func exitCodeAndStreams(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	spec.Limits = sandbox.Limits{Timeout: time.Minute}
	sess := start(t, b, spec)
	syncFiles(t, sess, map[string]string{"a.txt": "x\n"})
	tests := []struct {
		script         string
		code           int
		stdout, stderr string
	}{
		{script: "cat a.txt", stdout: "x\n"},
		{script: "echo out; echo err >&2; exit 3", code: 3, stdout: "out\n", stderr: "err\n"},
		{script: "exit 0"},
	}
	for _, tt := range tests {
		res := run(t, sess, sandbox.Command{Args: []string{"sh", "-c", tt.script}, Limits: spec.Limits})
		if res.ExitCode != tt.code || string(res.Stdout) != tt.stdout || string(res.Stderr) != tt.stderr || res.TimedOut {
			t.Errorf("sh -c %q = exit %d, stdout %q, stderr %q, timed out %v; want %d, %q, %q", tt.script, res.ExitCode, res.Stdout, res.Stderr, res.TimedOut, tt.code, tt.stdout, tt.stderr)
		}
	}
}

// localhost resolves and a server a test starts on it is reachable, as
// natively (docker with its network disabled had an empty /etc/hosts),
// while the sandbox still has no way out: the only interface is loopback.
func localhost(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	spec.Limits = sandbox.Limits{Timeout: time.Minute}
	sess := start(t, b, spec)
	script := `import socket, threading
srv = socket.socket(socket.AF_INET6 if socket.getaddrinfo("localhost", 0)[0][0] == socket.AF_INET6 else socket.AF_INET)
srv.bind(("localhost", 0)); srv.listen(1)
port = srv.getsockname()[1]
threading.Thread(target=lambda: srv.accept()[0].sendall(b"hello"), daemon=True).start()
c = socket.create_connection(("localhost", port), timeout=10)
print(c.recv(5).decode())
try:
    socket.create_connection(("192.0.2.1", 80), timeout=3)
    print("reached the outside")
except OSError:
    print("no route out")
`
	res := run(t, sess, sandbox.Command{Args: []string{"python3", "-c", script}, Limits: spec.Limits})
	if res.ExitCode != 0 || string(res.Stdout) != "hello\nno route out\n" {
		t.Errorf("a server on localhost: exit %d, stdout %q, stderr %q; want hello, then no route out", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// stdin reaches the command whole.
func stdin(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	spec.Limits = sandbox.Limits{Timeout: time.Minute}
	sess := start(t, b, spec)
	syncFiles(t, sess, nil)
	in := strings.Repeat("line of stdin\n", 20000) // more than a pipe buffer
	res := run(t, sess, sandbox.Command{Args: []string{"python3", "-c", "import sys; d = sys.stdin.read(); print(len(d), d.count('\\n'))"}, Stdin: []byte(in), Limits: spec.Limits})
	if want := fmt.Sprintf("%d %d\n", len(in), 20000); res.ExitCode != 0 || string(res.Stdout) != want {
		t.Errorf("stdin: exit %d, stdout %q, stderr %q; want %q", res.ExitCode, res.Stdout, res.Stderr, want)
	}
}

// timeout: a command past its timeout is stopped and reported as timed
// out (exit code 124), and the session still runs the next one.
func timeout(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	spec.Limits = sandbox.Limits{Timeout: time.Minute}
	sess := start(t, b, spec)
	syncFiles(t, sess, nil)
	res := run(t, sess, sandbox.Command{Args: []string{"sleep", "600"}, Limits: sandbox.Limits{Timeout: time.Second}})
	if !res.TimedOut || res.ExitCode != 124 {
		t.Errorf("sleep 600 with a 1 s timeout: timed out %v, exit %d; want timed out, 124", res.TimedOut, res.ExitCode)
	}
	if res := run(t, sess, sandbox.Command{Args: []string{"true"}, Limits: spec.Limits}); res.ExitCode != 0 {
		t.Errorf("true after a timeout: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
}

// syncDeletes: a file missing from the next snapshot is gone from the
// workspace, and a changed one has its new content.
func syncDeletes(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	spec.Limits = sandbox.Limits{Timeout: time.Minute}
	sess := start(t, b, spec)
	syncFiles(t, sess, map[string]string{"keep.txt": "old", "gone.txt": "x", "dir/gone.txt": "y"})
	syncFiles(t, sess, map[string]string{"keep.txt": "new"})
	res := run(t, sess, sandbox.Command{Args: []string{"sh", "-c", "cat keep.txt; test -e gone.txt && echo gone.txt; test -e dir/gone.txt && echo dir/gone.txt; true"}, Limits: spec.Limits})
	if string(res.Stdout) != "new" {
		t.Errorf("after the second Sync: stdout %q (stderr %q), want %q and no deleted file", res.Stdout, res.Stderr, "new")
	}
}

// modTimes: a file from disk keeps its modification time in the sandbox,
// across a second session too, and so does its directory, so tools keyed
// on times (Go's test cache) see them unchanged; a buffer's contents (in
// memory) get the current time.
func modTimes(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	spec.Limits = sandbox.Limits{Timeout: time.Minute}
	dir := t.TempDir()
	onDisk := time.Date(2021, 3, 4, 5, 6, 7, 123456789, time.UTC)
	for name, text := range map[string]string{"data/in.txt": "from disk", "buf.txt": "on disk"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, onDisk, onDisk); err != nil {
			t.Fatal(err)
		}
	}
	dirTime := time.Date(2022, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "data"), dirTime, dirTime); err != nil {
		t.Fatal(err)
	}
	snap, err := sandbox.SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ = snap.WithOverlays(map[string][]byte{"buf.txt": []byte("unsaved")})
	before := time.Now().Add(-time.Minute)
	for i := range 2 {
		sess := start(t, b, spec)
		if _, err := sess.Sync(t.Context(), snap); err != nil {
			t.Fatalf("Sync: %v", err)
		}
		res := run(t, sess, sandbox.Command{Args: []string{"stat", "-c", "%.9Y", "data/in.txt", "buf.txt", "data"}, Limits: spec.Limits})
		lines := strings.Fields(string(res.Stdout))
		if res.ExitCode != 0 || len(lines) != 3 {
			t.Fatalf("session %d: stat: exit %d, stdout %q, stderr %q", i+1, res.ExitCode, res.Stdout, res.Stderr)
		}
		if want := fmt.Sprintf("%d.%09d", onDisk.Unix(), onDisk.Nanosecond()); lines[0] != want {
			t.Errorf("session %d: data/in.txt modified at %s in the sandbox, want the host's %s", i+1, lines[0], want)
		}
		if want := fmt.Sprintf("%d.%09d", dirTime.Unix(), 0); lines[2] != want {
			t.Errorf("session %d: directory data modified at %s in the sandbox, want the host's %s (a Go test reading it would miss its cache)", i+1, lines[2], want)
		}
		if sec, _, _ := strings.Cut(lines[1], "."); atoi(sec) < before.Unix() {
			t.Errorf("session %d: the unsaved buffer's file modified at %s, want the current time (after %d)", i+1, lines[1], before.Unix())
		}
		sess.Close()
	}
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// tapGen prints a TAP stream of n tests, each after a 500-byte diagnostic
// line, about 1.5 MB for n = 3000: more than the 1 MiB output cap. With
// fail set, the last test fails, far past the cap.
const tapGen = `import sys
n, fail = int(sys.argv[1]), sys.argv[2] == "fail"
print("TAP version 13")
for i in range(1, n + 1):
    print("# " + "log line of test %d " % i + "x" * 480)
    if fail and i == n:
        print("not ok %d - test %d" % (i, i))
        print("  ---\n  error: 'the last one'\n  ...")
    else:
        print("ok %d - test %d" % (i, i))
print("1..%d" % n)
print("# tests %d\n# pass %d\n# fail %d" % (n, n - fail, fail))
sys.exit(1 if fail else 0)
`

// longOutputParsedInFull: a TAP stream longer than the output cap is
// parsed in full; a green run stays green, a failure
// after the cap is found, and the report says that the text was cut.
func longOutputParsedInFull(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	const n = 3000
	cases := []struct {
		name           string
		fail           bool
		passed, failed int
	}{
		{name: "green", passed: n},
		{name: "last fails", fail: true, passed: n - 1, failed: 1},
	}
	limits := sandbox.Limits{Timeout: 2 * time.Minute, OutputCap: 1 << 20}
	spec.Limits = limits
	sess := start(t, b, spec)
	syncFiles(t, sess, map[string]string{"gen.py": tapGen})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			arg := "pass"
			if c.fail {
				arg = "fail"
			}
			var shown bytes.Buffer
			r := testrun.Custom(fmt.Sprintf("python3 gen.py %d %s", n, arg), []*testrun.Format{testrun.TAP})
			rep, err := testrun.Run(t.Context(), sess, r, limits, &shown)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.Passed != c.passed || rep.Failed != c.failed {
				t.Errorf("passed/failed = %d/%d, want %d/%d", rep.Passed, rep.Failed, c.passed, c.failed)
			}
			if rep.OK() == c.fail {
				t.Errorf("OK() = %v with exit code %d, want %v", rep.OK(), rep.ExitCode, !c.fail)
			}
			if c.fail {
				last := rep.Tests[len(rep.Tests)-1]
				if last.ID != fmt.Sprintf("test %d", n) || last.Status != testrun.StatusFail || last.Message != "the last one" {
					t.Errorf("last test = %+v, want test %d failing with its message", last, n)
				}
			}
			cut := rep.OutputCut
			if cut == nil || cut.Parsed != testrun.ParsedFull || cut.StdoutBytes < 1<<20+1 || cut.Cap != 1<<20 {
				t.Fatalf("OutputCut = %+v, want the full stream parsed, past the 1 MiB cap", cut)
			}
			if note := cut.Note(); !strings.Contains(note, "1.0 MiB output cap") || !strings.Contains(note, "parsed from the full output") {
				t.Errorf("Note() = %q", note)
			}
			if shown.Len() > 1<<20+200 || !strings.Contains(shown.String(), "output truncated") {
				t.Errorf("streamed %d bytes, want at most the cap and the marker", shown.Len())
			}
		})
	}
}

// unittestGen defines n test methods with long names, so that unittest's
// verbose lines on stderr pass the 1 MiB cap; test n fails.
const unittestGen = `import unittest
n = 12000
class T(unittest.TestCase):
    pass
for i in range(1, n + 1):
    def f(self, i=i):
        self.assertNotEqual(i, n, "the last one")
    setattr(T, "test_%05d_%s" % (i, "z" * 60), f)
`

// longStderrParsedInFull: unittest reports on stderr; a run whose
// stderr passes the cap is still counted in full.
func longStderrParsedInFull(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	const n = 12000
	limits := sandbox.Limits{Timeout: 2 * time.Minute, OutputCap: 1 << 20}
	spec.Limits = limits
	sess := start(t, b, spec)
	syncFiles(t, sess, map[string]string{"test_many.py": unittestGen})
	r := testrun.Custom("python3 -m unittest -v test_many", []*testrun.Format{testrun.Unittest})
	rep, err := testrun.Run(t.Context(), sess, r, limits, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Runner != testrun.RunnerUnittest || rep.Passed != n-1 || rep.Failed != 1 {
		t.Errorf("runner %s passed/failed = %d/%d, want unittest %d/1", rep.Runner, rep.Passed, rep.Failed, n-1)
	}
	if f := rep.Failures(); len(f) != 1 || !strings.HasPrefix(f[0].ID, fmt.Sprintf("test_many.T.test_%05d_", n)) {
		t.Errorf("failures = %+v", f)
	}
	if rep.OutputCut == nil || rep.OutputCut.StderrBytes <= 1<<20 || rep.OutputCut.Parsed != testrun.ParsedFull {
		t.Errorf("OutputCut = %+v, want stderr past the cap, parsed in full", rep.OutputCut)
	}
}

// jestGen writes a jest-format report of n tests to the --outputFile path,
// about 12 MB for n = 60000: more than the docker backend reads in one
// piece (8 MiB). The last test fails.
const jestGen = `import json, sys
n = int(sys.argv[1])
path = sys.argv[2].split("=", 1)[1]
tests = [{"ancestorTitles": ["suite"], "title": "test %d %s" % (i, "y" * 100), "status": "passed", "failureMessages": []} for i in range(1, n)]
tests.append({"ancestorTitles": ["suite"], "title": "the last", "status": "failed", "failureMessages": ["Error: boom\n    at Object.<anonymous> (big.test.js:3:1)"]})
import os
os.makedirs(os.path.dirname(path), exist_ok=True)
json.dump({"numTotalTests": n, "testResults": [{"name": "big.test.js", "status": "failed", "message": "", "assertionResults": tests}]}, open(path, "w"))
sys.exit(1)
`

// bigReportReadInFull: a report file larger than a session reads in
// one piece is still read whole.
func bigReportReadInFull(t *testing.T, b sandbox.Backend, spec sandbox.Spec) {
	const n = 60000
	limits := sandbox.Limits{Timeout: 2 * time.Minute}
	spec.Limits = limits
	sess := start(t, b, spec)
	syncFiles(t, sess, map[string]string{"gen.py": jestGen})
	r := testrun.Custom(fmt.Sprintf("python3 gen.py %d --outputFile=out/big.json", n), []*testrun.Format{testrun.Jest})
	if r.ReportPath != "out/big.json" {
		t.Fatalf("ReportPath = %q", r.ReportPath)
	}
	rep, err := testrun.Run(t.Context(), sess, r, limits, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Runner != testrun.RunnerJest || rep.Passed != n-1 || rep.Failed != 1 {
		t.Errorf("runner %s passed/failed = %d/%d, want jest %d/1", rep.Runner, rep.Passed, rep.Failed, n-1)
	}
	if f := rep.Failures(); len(f) != 1 || f[0].ID != "big.test.js > suite > the last" || f[0].Line != 3 {
		t.Errorf("failures = %+v", f)
	}
}
