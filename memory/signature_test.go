package memory

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/fixpoint-dev/fixpoint/memory/memorytest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestSignatureGolden normalises every real output in memorytest/testdata/errors and
// compares with testdata/signatures/<name>.golden (go test -update rewrites
// them).
func TestSignatureGolden(t *testing.T) {
	files, err := filepath.Glob("memorytest/testdata/errors/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	if *update {
		if err := os.MkdirAll("testdata/signatures", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lang, _, _ := strings.Cut(name, "-")
			got := Signature(lang, string(raw)) + "\n"
			checkSignature(t, name, lang, string(raw), got)
			golden := filepath.Join("testdata/signatures", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("Signature(%s) =\n%s\nwant\n%s", name, got, want)
			}
		})
	}
}

// checkSignature holds what every signature must be, independently of the
// golden files (which -update rewrites): it names its language, says more
// than that, keeps nothing that varies between runs, and invents no text
// (each line's longest word is in the raw output).
func checkSignature(t *testing.T, name, lang, raw, got string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if lines[0] != "lang: "+lang || len(lines) < 2 {
		t.Errorf("Signature(%s) = %q, want \"lang: %s\" and at least one more line", name, got, lang)
	}
	for _, leak := range []string{"/tmp/", "0x", "goroutine ", ".go:", ".py\", line", "(0.0"} {
		if strings.Contains(got, leak) {
			t.Errorf("Signature(%s) keeps %q:\n%s", name, leak, got)
		}
	}
	for _, line := range lines[1:] {
		_, text, _ := strings.Cut(line, ": ")
		longest := ""
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
			if len(w) >= 3 && len(w) > len(longest) && !strings.Contains(text, "<"+w+">") {
				longest = w
			}
		}
		if longest != "" && !strings.Contains(raw, longest) {
			t.Errorf("Signature(%s) line %q: %q is not in the raw output", name, line, longest)
		}
	}
}

// TestSignatureStripsVariableParts covers each kind of varying part.
func TestSignatureStripsVariableParts(t *testing.T) {
	tests := []struct {
		name, lang, raw, want string
	}{
		{"go panic with addresses", "go", "--- FAIL: TestX (0.02s)\npanic: runtime error: index out of range [5] with length 3 [recovered]\n\ngoroutine 17 [running]:\nexample.com/p.f(0xc000012345, 0x3)\n\t/home/me/src/p/f.go:12 +0x1d\n",
			"lang: go\ntest: TestX\npanic: runtime error: index out of range [N] with length N\nframes: p.f"},
		{"python timestamp and port", "python", "Traceback (most recent call last):\n  File \"/srv/app/net.py\", line 3, in dial\nConnectionRefusedError: 2026-11-22T00:12:27Z could not reach localhost:5432 after 1.5s\n",
			"lang: python\nConnectionRefusedError: <time> could not reach <host>:<port> after <dur>\nframes: dial"},
		{"node uuid and temp path", "node", "Error: job 123e4567-e89b-12d3-a456-426614174000 failed reading /tmp/tmp.Xy12/out.json\n    at run (/home/u/app/job.js:10:5)\n",
			"lang: node\nError: job <uuid> failed reading out.json\nframes: run"},
		{"language detected", "", "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'k'\n",
			"lang: python\nKeyError: 'k'"},
		{"unknown format", "zig", "thread 'main' panicked at src/main.rs:2:5:\nexplicit panic at 0xdeadbeef\n",
			"lang: zig\nerror: thread 'main' panicked at src/main.rs:\nerror: explicit panic at 0x?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Signature(tt.lang, tt.raw); got != tt.want {
				t.Errorf("Signature(%q, %q) =\n%s\nwant\n%s", tt.lang, tt.raw, got, tt.want)
			}
		})
	}
}

// TestSignatureIsStableUnderQueryNormalisation: Recall normalises its
// query line by line; a Signature must come through unchanged.
func TestSignatureIsStableUnderQueryNormalisation(t *testing.T) {
	pairs, distractors, err := memorytest.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pairs, distractors...) {
		sig := Signature(p.Language, p.Stored)
		if got := normalizeQuery(sig); got != sig {
			t.Errorf("%s: normalizeQuery(Signature) =\n%s\nwant\n%s", p.Case, got, sig)
		}
	}
}

func TestHeadline(t *testing.T) {
	tests := []struct{ sig, want string }{
		{"lang: go\ntest: TestMedian\nMedian = N, want N\nframes: a < b", "Median = N, want N"},
		{"one line", "one line"},
		{"lang: go\n", "lang: go"},
	}
	for _, tt := range tests {
		if got := Headline(tt.sig); got != tt.want {
			t.Errorf("Headline(%q) = %q, want %q", tt.sig, got, tt.want)
		}
	}
}
