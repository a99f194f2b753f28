package swe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goldDiff = `diff --git a/calc/calc.go b/calc/calc.go
index 1111111..2222222 100644
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -3,7 +3,7 @@ package calc
 // Add adds.
 func Add(a, b int) int { return a + b }
 
-// Max is the larger.
-func Max(a, b int) int { if a < b { return a }; return b }
+// Max is the larger.
+func Max(a, b int) int { if a > b { return a }; return b }
 
 // Min is the smaller.
@@ -12,2 +12,4 @@ func Min(a, b int) int { if a < b { return a }; return b }
 // End.
 var End = 1
+
+var Added = 2
diff --git a/calc/new.go b/calc/new.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/calc/new.go
@@ -0,0 +1,2 @@
+package calc
+var New = 3
`

const calcBefore = `package calc

// Add adds.
func Add(a, b int) int { return a + b }

// Max is the larger.
func Max(a, b int) int { if a < b { return a }; return b }

// Min is the smaller.
func Min(a, b int) int { if a < b { return a }; return b }

// End.
var End = 1
`

func TestParseAndApply(t *testing.T) {
	fs, err := ParsePatch(goldDiff)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || fs[0].Path() != "calc/calc.go" || fs[1].Old != "" || fs[1].Path() != "calc/new.go" {
		t.Fatalf("ParsePatch = %+v", fs)
	}
	h := fs[0].Hunks
	if len(h) != 2 || len(h[0].Removed) != 2 || h[0].Removed[1] != "func Max(a, b int) int { if a < b { return a }; return b }" {
		t.Fatalf("hunks = %+v", h)
	}
	if want := []string{"var End = 1"}; len(h[1].Removed) != 0 || strings.Join(h[1].Around, "|") != strings.Join(want, "|") {
		t.Errorf("insertion's Around = %q, want %q", h[1].Around, want)
	}
	after, err := fs[0].Apply(calcBefore)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(after, "if a > b") || !strings.HasSuffix(after, "var End = 1\n\nvar Added = 2\n") {
		t.Errorf("Apply = %q", after)
	}
	if got, err := fs[1].Apply(""); err != nil || got != "package calc\nvar New = 3\n" {
		t.Errorf("Apply(new file) = %q, %v", got, err)
	}
	if _, err := fs[0].Apply("unrelated\n"); err == nil {
		t.Error("Apply to a file without the hunk's lines succeeded")
	}
}

// The oracle's edits reproduce the patched file exactly: SEARCH parts are
// unique (the duplicated "if a < b" line needs context) and apply in order.
func TestEditsReproduceThePatch(t *testing.T) {
	fs, err := ParsePatch(goldDiff)
	if err != nil {
		t.Fatal(err)
	}
	edits, err := fs[0].Edits(calcBefore)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fs[0].Apply(calcBefore)
	got := calcBefore
	for _, blk := range strings.Split(edits, ">>>>>>> REPLACE\n") {
		if strings.TrimSpace(blk) == "" {
			continue
		}
		_, body, _ := strings.Cut(blk, "<<<<<<< SEARCH\n")
		search, replace, _ := strings.Cut(body, "=======\n")
		if n := strings.Count(got, search); n != 1 {
			t.Fatalf("SEARCH %q occurs %d times", search, n)
		}
		got = strings.Replace(got, search, replace, 1)
	}
	if got != want {
		t.Errorf("edits give\n%s\nwant\n%s", got, want)
	}
}

func TestMissingTargets(t *testing.T) {
	fs, _ := ParsePatch(goldDiff)
	whole := "## File: calc/calc.go\n```\n" + calcBefore + "```\n"
	if m := missingTargets(whole, fs); len(m) != 0 {
		t.Errorf("whole file shown: missing %q", m)
	}
	excerpt := "## File: calc/calc.go (excerpt, lines 1-8)\n```\n" + strings.Join(strings.Split(calcBefore, "\n")[:8], "\n") + "\n```\n"
	if m := missingTargets(excerpt, fs); len(m) != 1 || m[0] != "calc/calc.go:12" {
		t.Errorf("excerpt without the end: missing %q, want [calc/calc.go:12]", m)
	}
	if m := missingTargets("## Repository map\ncalc/calc.go: func Max\n", fs); len(m) != 2 {
		t.Errorf("only the repo map: missing %q, want both hunks", m)
	}
}

func TestParsePatchErrors(t *testing.T) {
	for _, bad := range []string{
		"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n",
		"--- a/x\n+++ b/x\n@@ bogus @@\n",
		"@@ -1 +1 @@\n-a\n+b\n",
		"diff --git a/x b/x\nBinary files a/x and b/x differ\n",
	} {
		if _, err := ParsePatch(bad); err == nil {
			t.Errorf("ParsePatch(%q) succeeded", bad)
		}
	}
}

// The change groups of a hunk: each run of removed lines with the
// context line either side of it (a pure insertion: those two alone).
func TestHunkGroups(t *testing.T) {
	fs, err := ParsePatch("--- a/x.go\n+++ b/x.go\n@@ -1,7 +1,6 @@\n a\n-b\n-c\n+B\n d\n e\n+inserted\n f\n-g\n")
	if err != nil {
		t.Fatal(err)
	}
	got := fs[0].Hunks[0].Groups
	want := [][]string{{"a", "b", "c", "d"}, {"e", "f"}, {"f", "g"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("groups %q, want %q", got, want)
	}
}

// applyEdits applies SEARCH/REPLACE blocks as exact text replacements,
// failing when a SEARCH part does not occur exactly once.
func applyEdits(t *testing.T, before, edits string) string {
	t.Helper()
	got := before
	for _, blk := range strings.Split(edits, ">>>>>>> REPLACE\n") {
		if strings.TrimSpace(blk) == "" {
			continue
		}
		_, body, _ := strings.Cut(blk, "<<<<<<< SEARCH\n")
		search, replace, _ := strings.Cut(body, "=======\n")
		if n := strings.Count(got, search); n != 1 {
			t.Fatalf("SEARCH %q occurs %d times in %q", search, n, got)
		}
		got = strings.Replace(got, search, replace, 1)
	}
	return got
}

// A file with no final newline (vercel/ms's index.js): the patch's
// "\ No newline at end of file" markers keep it so, and the oracle's blocks
// stop short of the last line, whose text has no newline to match.
func TestNoFinalNewline(t *testing.T) {
	const before = "x\nend\nb\nc\nend"
	const file = "--- a/f.js\n+++ b/f.js\n"
	cases := []struct {
		name, hunk, want string
		editErr          bool // the edit changes the last line itself
	}{
		{"context at the end", "@@ -3,3 +3,3 @@\n b\n-c\n+C\n end\n\\ No newline at end of file\n", "x\nend\nb\nC\nend", false},
		{"last line edited", "@@ -4,2 +4,2 @@\n c\n-end\n\\ No newline at end of file\n+END\n\\ No newline at end of file\n", "x\nend\nb\nc\nEND", true},
		{"newline added", "@@ -4,2 +4,2 @@\n c\n-end\n\\ No newline at end of file\n+end\n", "x\nend\nb\nc\nend\n", false},
		{"hunk away from the end", "@@ -1,2 +1,2 @@\n-x\n+X\n end\n", "X\nend\nb\nc\nend", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, err := ParsePatch(file + c.hunk)
			if err != nil || len(fs) != 1 {
				t.Fatalf("ParsePatch = %+v, %v", fs, err)
			}
			got, err := fs[0].Apply(before)
			if err != nil || got != c.want {
				t.Fatalf("Apply = %q, %v; want %q", got, err, c.want)
			}
			edits, err := fs[0].Edits(before)
			if c.editErr {
				if err == nil || !strings.Contains(err.Error(), "no final newline") || !strings.Contains(err.Error(), "f.js") {
					t.Fatalf("Edits = %q, %v; want an error naming the file and the missing newline", edits, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The blocks leave the final newline as it was: only "newline
			// added" differs from Apply, by that newline.
			if got := applyEdits(t, before, edits); got != strings.TrimSuffix(c.want, "\n") {
				t.Errorf("edits give %q, want %q (blocks:\n%s)", got, c.want, edits)
			}
		})
	}
	// A new file whose last line has no newline.
	fs, err := ParsePatch("--- /dev/null\n+++ b/n.js\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := fs[0].Apply(""); err != nil || got != "a\nb" {
		t.Errorf("Apply(new file) = %q, %v; want %q", got, err, "a\nb")
	}
}

// A test_cmd that starts with variable assignments runs through env: as
// argv, "PYTHONPATH=src" would be taken for the program.
func TestEnvPrefixed(t *testing.T) {
	for in, want := range map[string]string{
		"PYTHONPATH=src python3 -m pytest -q": "env PYTHONPATH=src python3 -m pytest -q",
		"  A=1 B='x y' npx jest --json":       "env A=1 B='x y' npx jest --json",
		"npx ava --tap":                       "npx ava --tap",
		"env A=1 go test ./...":               "env A=1 go test ./...",
		"go test -run=TestX ./...":            "go test -run=TestX ./...",
		"":                                    "",
	} {
		if got := envPrefixed(in); got != want {
			t.Errorf("envPrefixed(%q) = %q, want %q", in, got, want)
		}
	}
}

// A test patch's symbolic links and executables are laid out as git
// would: distro's fixtures link etc/os-release, and a file holding the
// link's path instead made its tests fail before and after the fix. A
// link out of the tree is refused.
func TestApplyFileModes(t *testing.T) {
	const patch = `diff --git a/etc/os-release b/etc/os-release
new file mode 120000
index 0000000..1111111
--- /dev/null
+++ b/etc/os-release
@@ -0,0 +1 @@
+../usr/lib/os-release
\ No newline at end of file
diff --git a/usr/lib/os-release b/usr/lib/os-release
new file mode 100644
index 0000000..2222222
--- /dev/null
+++ b/usr/lib/os-release
@@ -0,0 +1 @@
+ID=armbian
diff --git a/run.sh b/run.sh
new file mode 100755
index 0000000..3333333
--- /dev/null
+++ b/run.sh
@@ -0,0 +1 @@
+#!/bin/sh
`
	files, err := ParsePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, f := range files {
		if err := applyFile(root, f); err != nil {
			t.Fatalf("%s: %v", f.Path(), err)
		}
	}
	if target, err := os.Readlink(filepath.Join(root, "etc", "os-release")); err != nil || target != "../usr/lib/os-release" {
		t.Errorf("etc/os-release: link to %q (%v), want ../usr/lib/os-release", target, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "etc", "os-release")); err != nil || string(b) != "ID=armbian\n" {
		t.Errorf("through the link: %q, %v", b, err)
	}
	if st, err := os.Stat(filepath.Join(root, "run.sh")); err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Errorf("run.sh is not executable: %v %v", st, err)
	}
	if st, err := os.Stat(filepath.Join(root, "usr", "lib", "os-release")); err != nil || st.Mode().Perm()&0o111 != 0 {
		t.Errorf("a 100644 file became executable: %v %v", st, err)
	}
	for _, target := range []string{"../../outside", "/etc/passwd"} {
		escape := strings.ReplaceAll(patch[:strings.Index(patch, "diff --git a/usr")], "../usr/lib/os-release", target)
		files, err := ParsePatch(escape)
		if err != nil {
			t.Fatal(err)
		}
		if err := applyFile(t.TempDir(), files[0]); err == nil || !strings.Contains(err.Error(), "outside the tree") {
			t.Errorf("a link to %s: %v, want it refused", target, err)
		}
	}
}
