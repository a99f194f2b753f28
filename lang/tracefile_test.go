package lang_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// ParseSpansJSON reads a file project code wrote: every way out of the
// workspace, into a file that is not a source of the snapshot, or past
// its bounds is dropped, and nothing in it makes the reader fail but its
// size and not being JSON.
func TestParseSpansJSONHostile(t *testing.T) {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"a.py":       {Data: []byte("x")},
		"pkg/b.py":   {Data: []byte("x")},
		"link.py":    {Link: "a.py"},
		"notes.txt":  {Data: []byte("x")},
		"dir/c.py":   {Data: []byte("x")},
		".git/h.py":  {Data: []byte("x")},
		"weird\\.py": {Data: []byte("x")},
	}}
	keep := func(rel string) bool { return strings.HasSuffix(rel, ".py") }
	const root = "/work/space"
	for _, tt := range []struct {
		name, data string
		want       lang.Trace
		err        bool
	}{
		{name: "relative and absolute under root", data: `{"files":{"a.py":[[1,1,0]],"/work/space/pkg/b.py":[[3,5,2]]}}`,
			want: lang.Trace{"a.py": {{1, 1, 0}}, "pkg/b.py": {{3, 5, 2}}}},
		{name: "absolute outside root", data: `{"files":{"/etc/passwd.py":[[1,1,0]],"/work/spacex/a.py":[[1,1,0]],"/work/a.py":[[1,1,0]]}}`, want: lang.Trace{}},
		{name: "dot-dot", data: `{"files":{"../space/a.py":[[1,1,0]],"pkg/../../a.py":[[1,1,0]],"/work/space/../space/a.py":[[2,2,0]],"..":[[1,1,0]]}}`,
			want: lang.Trace{"a.py": {{2, 2, 0}}}},
		{name: "cleaned inside", data: `{"files":{"./pkg//b.py":[[1,1,0]],"dir/../a.py":[[1,1,0]]}}`,
			want: lang.Trace{"pkg/b.py": {{1, 1, 0}}, "a.py": {{1, 1, 0}}}},
		{name: "symlink, missing file, other kind, NUL, backslash", data: `{"files":{"link.py":[[1,1,0]],"gone.py":[[1,1,0]],"notes.txt":[[1,1,0]],"a.py\u0000x":[[1,1,0]],"weird\\.py":[[1,1,0]],"":[[1,1,0]],".":[[1,1,0]]}}`,
			want: lang.Trace{}},
		{name: "relative root ignored for absolute paths", data: `{"files":{"/a.py":[[1,1,0]]}}`, want: lang.Trace{}},
		{name: "bad spans dropped, good kept", data: `{"files":{"a.py":[[0,1,0],[-3,1,0],[2],[1.5,2,0],[1e400,1,0],[4,2,-7],[5,5,1e12],[99999999999,1,0],[6,6,1,"extra"]]}}`,
			want: lang.Trace{"a.py": {{4, 4, 0}, {5, 5, 2147483647}, {6, 6, 1}}}},
		{name: "wrong shape for one file", data: `{"files":{"a.py":"lines","pkg/b.py":[[1,1,0]],"dir/c.py":[["1","1"]]}}`,
			want: lang.Trace{"pkg/b.py": {{1, 1, 0}}}},
		{name: "duplicates folded", data: `{"files":{"a.py":[[3,3,1],[1,1,0],[3,3,2]]}}`, want: lang.Trace{"a.py": {{1, 1, 0}, {3, 3, 3}}}},
		{name: "extra fields", data: `{"version":7,"tracer":"x","files":{"a.py":[[1,1,0]]},"more":{"a":[1]}}`, want: lang.Trace{"a.py": {{1, 1, 0}}}},
		{name: "no files", data: `{}`, want: lang.Trace{}},
		{name: "files not an object", data: `{"files":[1,2]}`, err: true},
		{name: "garbage", data: "\x00\xff not json", err: true},
		{name: "empty", data: "", err: true},
		{name: "too large", data: `{"files":{}}` + strings.Repeat(" ", lang.MaxTraceBytes), err: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lang.ParseSpansJSON(snap, root, []byte(tt.data), keep)
			if (err != nil) != tt.err {
				t.Fatalf("ParseSpansJSON(%.80q) error = %v, want error %v", tt.data, err, tt.err)
			}
			if !tt.err && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSpansJSON(%.200q) = %v, want %v", tt.data, got, tt.want)
			}
		})
	}
}

// A trace with more spans or files than the bounds keeps the bounds.
func TestParseSpansJSONBounds(t *testing.T) {
	files := map[string]sandbox.File{}
	var b strings.Builder
	b.WriteString(`{"files":{`)
	n := lang.MaxTraceFiles + 50
	for i := range n {
		p := fmt.Sprintf("f%05d.py", i)
		files[p] = sandbox.File{Data: []byte("x")}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:[[1,1,0],[2,2,0]]", p)
	}
	fmt.Fprintf(&b, `,"big.py":[`)
	files["big.py"] = sandbox.File{Data: []byte("x")}
	for i := range lang.MaxTraceSpans + 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%d,%d,1]", i+1, i+1)
	}
	b.WriteString("]}}")
	got, err := lang.ParseSpansJSON(&sandbox.Snapshot{Files: files}, "/workspace", []byte(b.String()), func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	spans := 0
	for _, s := range got {
		spans += len(s)
	}
	if len(got) > lang.MaxTraceFiles || spans > lang.MaxTraceSpans || spans == 0 {
		t.Errorf("ParseSpansJSON of %d files and %d spans kept %d files and %d spans, want at most %d and %d",
			n+1, 2*n+lang.MaxTraceSpans+10, len(got), spans, lang.MaxTraceFiles, lang.MaxTraceSpans)
	}
}

// Fuzzing the reader: it never panics and keeps only snapshot paths.
func FuzzParseSpansJSON(f *testing.F) {
	f.Add([]byte(`{"files":{"a.py":[[1,1,0]],"/workspace/a.py":[[2,3,4]],"../x":[[1,1,1]]}}`))
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{"a.py": {Data: []byte("x")}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := lang.ParseSpansJSON(snap, "/workspace", data, func(string) bool { return true })
		if err != nil {
			return
		}
		for p, spans := range got {
			if p != "a.py" {
				t.Fatalf("kept %q", p)
			}
			for _, s := range spans {
				if s.From < 1 || s.To < s.From || s.Count < 0 {
					t.Fatalf("span %+v", s)
				}
			}
		}
	})
}
