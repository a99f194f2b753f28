package edit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// addGoldenSeeds adds the replies of the golden files as seeds.
func addGoldenSeeds(f *testing.F, dir string, add func(reply string, files map[string]string)) {
	paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		a := txtar.Parse(raw)
		reply, _ := section(a, "reply")
		files := map[string]string{}
		for _, s := range a.Files {
			if name, ok := strings.CutPrefix(s.Name, "file/"); ok {
				files[name] = string(s.Data)
			}
		}
		add(reply, files)
	}
}

// FuzzParse checks that Parse never panics, that blocks are well formed,
// and that formatting the blocks again parses to the same blocks.
func FuzzParse(f *testing.F) {
	addGoldenSeeds(f, "parse", func(reply string, _ map[string]string) { f.Add(reply) })
	f.Fuzz(func(t *testing.T, reply string) {
		blocks, err := Parse(reply)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse error %T, want *ParseError", err)
			}
			return
		}
		var b strings.Builder
		for i, bl := range blocks {
			if bl.Path == "" || bl.Index != i+1 {
				t.Fatalf("block %d: %+v", i, bl)
			}
			for _, part := range []string{bl.Search, bl.Replace} {
				if part != "" && !strings.HasSuffix(part, "\n") {
					t.Fatalf("block %d part %q does not end in a newline", i, part)
				}
			}
			b.WriteString(bl.Path + "\n<<<<<<< SEARCH\n" + bl.Search + "=======\n" + bl.Replace + ">>>>>>> REPLACE\n\n")
		}
		again, err := Parse(b.String())
		if err != nil {
			t.Fatalf("re-parsing formatted blocks: %v\n%s", err, b.String())
		}
		if len(again) != len(blocks) {
			t.Fatalf("re-parse gave %d blocks, want %d", len(again), len(blocks))
		}
		for i := range blocks {
			if again[i] != blocks[i] {
				t.Fatalf("block %d: re-parse %+v, want %+v", i, again[i], blocks[i])
			}
		}
	})
}

// FuzzApply checks that Apply never panics, is all or nothing, and agrees
// with a plain string replacement when SEARCH occurs exactly once on line
// boundaries; it also checks that LineEdits reproduce the change.
func FuzzApply(f *testing.F) {
	addGoldenSeeds(f, "apply", func(reply string, files map[string]string) {
		blocks, err := Parse(reply)
		if err != nil || len(blocks) == 0 {
			return
		}
		f.Add(files[blocks[0].Path], blocks[0].Search, blocks[0].Replace)
	})
	f.Add("a\n\tb\nc\n", "  b\n", "  x\n    y\n")
	f.Add("a\r\nb\r\n", "b\n", "c\n")
	f.Fuzz(func(t *testing.T, file, search, replace string) {
		if search != "" && !strings.HasSuffix(search, "\n") {
			search += "\n"
		}
		if replace != "" && !strings.HasSuffix(replace, "\n") {
			replace += "\n"
		}
		snap := snapOf(map[string]string{"f.txt": file})
		got, err := Apply(snap, []Block{{Path: "f.txt", Search: search, Replace: replace, Index: 1}}, nil)
		if err != nil {
			if got != nil {
				t.Fatal("changes returned with an error")
			}
			if _, ok := err.(*ApplyError); !ok {
				t.Fatalf("Apply error %T, want *ApplyError", err)
			}
			if FormatFeedback(err) == "" {
				t.Fatal("empty feedback")
			}
			return
		}
		after, changed := got["f.txt"]
		if !changed {
			after = []byte(file)
		}
		if search != "" && !strings.Contains(file, "\r") && (strings.HasPrefix(file, search) || strings.Contains(file, "\n"+search)) &&
			strings.Count("\n"+file, "\n"+search) == 1 && strings.HasSuffix(file, "\n") {
			want := strings.Replace("\n"+file, "\n"+search, "\n"+replace, 1)[1:]
			if string(after) != want {
				t.Fatalf("Apply = %q, want %q", after, want)
			}
		}
		if res := applyHunks(file, LineEdits([]byte(file), after)); res != string(after) {
			t.Fatalf("LineEdits do not reproduce the change: %q, want %q", res, after)
		}
		_ = Diff("f.txt", []byte(file), after)
	})
}

// FuzzLineEdits checks that the hunks of any two texts reproduce the second
// and are ordered and disjoint.
func FuzzLineEdits(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd")
	f.Add("", "x")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n3\n2\n4\n6\n5\n8\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		hunks := LineEdits([]byte(before), []byte(after))
		last := -1
		for _, h := range hunks {
			if h.StartLine < last || h.EndLine < h.StartLine || (h.StartLine == h.EndLine && len(h.NewLines) == 0) {
				t.Fatalf("bad hunks %+v", hunks)
			}
			last = h.EndLine
		}
		if res := applyHunks(before, hunks); res != after {
			t.Fatalf("hunks give %q, want %q", res, after)
		}
		d := Diff("f", []byte(before), []byte(after))
		if (d == "") != (before == after) {
			t.Fatalf("Diff empty = %v for before == after %v", d == "", before == after)
		}
	})
}
