package node

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/langtest"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// istanbulSnap is the workspace the hostile coverage maps below name.
func istanbulSnap() *sandbox.Snapshot {
	snap := langtest.SnapOf(map[string]string{
		"lib.js":                         libJS,
		"src/a.ts":                       "export const a = 1;\n",
		"data.json":                      "{}\n",
		"node_modules/dep/i.js":          "x\n",
		"packages/p/node_modules/d/i.js": "x\n",
	})
	snap.Files["link.js"] = sandbox.File{Link: "lib.js"}
	return snap
}

// fileCov is one file's coverage: functions (decl line -> count) and
// statements ([from, to, count]).
func fileCov(fns map[int]int, stmts ...[3]any) map[string]any {
	fnMap, f := map[string]any{}, map[string]any{}
	i := 0
	for line, n := range fns {
		id := fmt.Sprint(i)
		fnMap[id] = map[string]any{"name": "f", "decl": map[string]any{"start": map[string]any{"line": line, "column": 0}, "end": map[string]any{"line": line, "column": 5}}, "loc": map[string]any{"start": map[string]any{"line": line}, "end": map[string]any{"line": line + 2}}}
		f[id] = n
		i++
	}
	sm, s := map[string]any{}, map[string]any{}
	for i, st := range stmts {
		id := fmt.Sprint(i)
		sm[id] = map[string]any{"start": map[string]any{"line": st[0], "column": 0}, "end": map[string]any{"line": st[1], "column": 1}}
		s[id] = st[2]
	}
	return map[string]any{"statementMap": sm, "fnMap": fnMap, "branchMap": map[string]any{}, "s": s, "f": f, "b": map[string]any{}}
}

func istanbulTrace(t *testing.T, cov map[string]any) (lang.Trace, error) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"istanbul": cov})
	if err != nil {
		t.Fatal(err)
	}
	return Language{}.ParseTrace(istanbulSnap(), "/workspace", data)
}

// A coverage map is written by project code: ParseTrace keeps only what
// names a regular source file of the snapshot inside the workspace,
// outside node_modules, with lines and counts of the right shape.
func TestParseTraceIstanbul(t *testing.T) {
	got, err := istanbulTrace(t, map[string]any{
		"/workspace/lib.js": fileCov(map[int]int{2: 3, 5: 0}, [3]any{3, 3, 3}, [3]any{6, 6, 0}, [3]any{8, 200, 1}),
		"src/a.ts":          fileCov(map[int]int{1: 1}, [3]any{1, 1, 1}),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := lang.Trace{
		"lib.js":   {{From: 2, To: 2, Count: 3}, {From: 3, To: 3, Count: 3}, {From: 8, To: 8 + maxStatementLines, Count: 1}},
		"src/a.ts": {{From: 1, To: 1, Count: 1}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("trace = %v, want %v", got, want)
	}
	// v8-to-istanbul's line map (every statement one line from column
	// 0) counts the module's whole top level: only lines of functions
	// that ran are kept, less those of a function that did not.
	lines := make([][3]any, 0, 10)
	for l := 1; l <= 10; l++ {
		lines = append(lines, [3]any{l, l, 1})
	}
	v8map := fileCov(map[int]int{3: 2, 7: 0}, lines...)
	got, err = istanbulTrace(t, map[string]any{"lib.js": v8map, "src/a.ts": fileCov(nil, [3]any{1, 1, 1})})
	if want := "map[lib.js:[{3 3 2} {4 4 1} {5 5 1}]]"; err != nil || fmt.Sprint(got) != want {
		t.Errorf("trace of a line map = %v, %v; want %s", got, err, want)
	}
	ok := fileCov(map[int]int{2: 1}, [3]any{3, 3, 1})
	for _, tt := range []struct {
		name string
		cov  map[string]any
	}{
		{"a path out of the workspace", map[string]any{"../lib.js": ok, "/workspace/../etc/passwd": ok, "/etc/passwd": ok, "/workspacex/lib.js": ok}},
		{"a symlink", map[string]any{"link.js": ok, "/workspace/link.js": ok}},
		{"not in the snapshot", map[string]any{"gone.js": ok, "/workspace/gone.js": ok, "/tmp/x.js": ok}},
		{"node_modules", map[string]any{"node_modules/dep/i.js": ok, "/workspace/packages/p/node_modules/d/i.js": ok}},
		{"not a source", map[string]any{"data.json": ok}},
		{"odd names", map[string]any{"": ok, ".": ok, "lib.js\x00": ok, "lib.js\\..\\x": ok, strings.Repeat("a/", 3000) + "lib.js": ok}},
		{"wrong shapes", map[string]any{"lib.js": map[string]any{"statementMap": []any{1}, "fnMap": "x", "s": map[string]any{"0": "1"}, "f": nil}}},
		{"a file that is not an object", map[string]any{"lib.js": []any{1, 2}}},
		{"bad lines and counts", map[string]any{"lib.js": fileCov(map[int]int{0: 1, -3: 5, 1 << 40: 1, 4: -1}, [3]any{2.5, 3, 1}, [3]any{"3", 3, 1}, [3]any{3, 3, 1.5}, [3]any{nil, 3, 1}, [3]any{3, 3, -7}, [3]any{1e300, 1e300, 1})}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := istanbulTrace(t, tt.cov)
			if err != nil || len(got) != 0 {
				t.Errorf("trace = %v, %v; want an empty trace", got, err)
			}
		})
	}
	for _, bad := range []string{`{"istanbul": [1]}`, `{"istanbul": "x"}`, `[`, `{"istanbul": {"lib.js": ` + strings.Repeat("[", 20000)} {
		if got, err := (Language{}).ParseTrace(istanbulSnap(), "/workspace", []byte(bad)); err == nil && len(got) > 0 {
			t.Errorf("ParseTrace(%.40q) = %v, want nothing", bad, got)
		}
	}
	big := []byte(`{"istanbul": {"lib.js": "` + strings.Repeat("x", lang.MaxTraceBytes) + `"}}`)
	if _, err := (Language{}).ParseTrace(istanbulSnap(), "/workspace", big); err == nil {
		t.Errorf("a trace over %d bytes was read", lang.MaxTraceBytes)
	}
	// Counts are capped and spans per file bounded by the caller's limits.
	huge, err := istanbulTrace(t, map[string]any{"lib.js": fileCov(map[int]int{2: 1 << 40})})
	if err != nil || len(huge["lib.js"]) != 1 || huge["lib.js"][0].Count != 1<<31-1 {
		t.Errorf("trace = %v, %v; want lib.js line 2 with the count capped", huge, err)
	}
}

// FuzzParseTraceIstanbul: whatever the file holds, a trace names only
// regular source files of the snapshot outside node_modules, with
// lines in bounds.
func FuzzParseTraceIstanbul(f *testing.F) {
	f.Add([]byte(`{"istanbul":{"/workspace/lib.js":{"statementMap":{"0":{"start":{"line":2},"end":{"line":3}}},"s":{"0":1},"fnMap":{"0":{"decl":{"start":{"line":2}}}},"f":{"0":2}}}}`))
	f.Add([]byte(`{"istanbul":{"link.js":{"statementMap":{"0":{"start":{"line":1},"end":{"line":1}}},"s":{"0":1}}}}`))
	f.Add([]byte(`{"istanbul":{"../lib.js":{},"node_modules/dep/i.js":{"s":{"0":1}}}}`))
	f.Add([]byte(`{"files":{"lib.js":[[1,2,3]]}}`))
	snap := istanbulSnap()
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Language{}.ParseTrace(snap, "/workspace", data)
		if err != nil {
			return
		}
		for rel, spans := range got {
			file, ok := snap.Files[rel]
			if !ok || file.Link != "" || !isSource(rel) || strings.Contains("/"+rel, "/node_modules/") {
				t.Fatalf("trace names %q", rel)
			}
			for _, s := range spans {
				if s.From < 1 || s.To < s.From || s.To > maxIstanbulLine+maxStatementLines || s.Count < 0 {
					t.Fatalf("span %+v of %s out of bounds", s, rel)
				}
			}
		}
	})
}

// TestParseTraceIstanbulSpanCap: a map with more statements that ran than
// lang.MaxTraceSpans yields at most that many spans over all files.
func TestParseTraceIstanbulSpanCap(t *testing.T) {
	n := lang.MaxTraceSpans + 10
	stmts := make([][3]any, n)
	for i := range stmts {
		// Two lines each (not a line map) with a line between them, so
		// that no two merge.
		stmts[i] = [3]any{3*i + 1, 3*i + 2, 1}
	}
	got, err := istanbulTrace(t, map[string]any{"lib.js": fileCov(nil, stmts...), "src/a.ts": fileCov(nil, [3]any{1, 1, 1})})
	if err != nil {
		t.Fatal(err)
	}
	spans := 0
	for _, s := range got {
		spans += len(s)
	}
	if spans != lang.MaxTraceSpans {
		t.Fatalf("%d statements that ran gave %d spans over %d files; want the cap, %d", n+1, spans, len(got), lang.MaxTraceSpans)
	}
}
