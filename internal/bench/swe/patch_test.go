package swe

import (
	"fmt"
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
