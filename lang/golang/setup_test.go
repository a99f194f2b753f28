package golang

import (
	"sort"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func TestSetupChanges(t *testing.T) {
	const mod = "module example.com/x\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.2.0\n\tgolang.org/x/text v0.14.0 // indirect\n)\n"
	gm := func(s string) map[string]string { return map[string]string{"go.mod": s} }
	runSetupCases(t, Language{}, []setupCase{
		{name: "replace with a path", before: gm(mod), after: gm(mod + "replace github.com/a/b => ../evil\n"), want: []string{`go.mod: replaces "github.com/a/b" with "../evil"`}},
		{name: "replace block with another module", before: gm(mod), after: gm(mod + "replace (\n\tgithub.com/a/b v1.2.0 => github.com/evil/b v1.0.0\n)\n"),
			want: []string{`replaces "github.com/a/b v1.2.0" with "github.com/evil/b v1.0.0"`}},
		{name: "toolchain", before: gm(mod), after: gm(strings.Replace(mod, "go 1.22\n", "go 1.22\ntoolchain go1.23.4\n", 1)), want: []string{`sets the toolchain line "go1.23.4"`}},
		{name: "go line", before: gm(mod), after: gm(strings.Replace(mod, "go 1.22", "go 1.24", 1)), want: []string{`changes the go line from "1.22" to "1.24"`}},
		{name: "required version", before: gm(mod), after: gm(strings.Replace(mod, "v1.2.0", "v1.9.9", 1)), want: []string{`changes the required version of "github.com/a/b" from "v1.2.0" to "v1.9.9"`}},
		{name: "single-line require changed", before: gm("module m\nrequire github.com/a/b v1.0.0\n"), after: gm("module m\nrequire github.com/a/b v1.0.1\n"), want: []string{"from \"v1.0.0\" to \"v1.0.1\""}},
		{name: "go.work", before: map[string]string{}, after: map[string]string{"go.work": "go 1.22\nuse ./evil\n"}, want: []string{"go.work: changes the Go workspace"}},
		{name: "a nested module's go.mod", before: map[string]string{"tools/go.mod": "module t\n"}, after: map[string]string{"tools/go.mod": "module t\nreplace a => ../../b\n"}, want: []string{"tools/go.mod: replaces"}},

		// Near misses.
		{name: "comment", before: gm(mod), after: gm(strings.Replace(mod, "// indirect", "", 1))},
		{name: "new requirement is left to the allow-list", before: gm(mod), after: gm(mod + "require github.com/c/d v1.0.0\n")},
		{name: "go.sum", before: map[string]string{"go.sum": "a v1 h1:x\n"}, after: map[string]string{"go.sum": "a v1 h1:x\nb v1 h1:y\n"}},
		{name: "source file", before: map[string]string{"x.go": "package x"}, after: map[string]string{"x.go": "package x // y"}},
		{name: "replace removed", before: gm(mod + "replace github.com/a/b => ../b\n"), after: gm(mod)},
	})
}

// setupCase is an edit (before -> after; a file missing from after is
// deleted) and the changes SetupChanges must report: one substring of
// "file: what" per change, none for an edit setup does not see.
type setupCase struct {
	name          string
	before, after map[string]string
	want          []string
}

func runSetupCases(t *testing.T, l lang.SetupChanges, cases []setupCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before, after := snapOf(tt.before), snapOf(tt.after)
			var changed []string
			for p := range tt.after {
				if b, ok := tt.before[p]; !ok || b != tt.after[p] {
					changed = append(changed, p)
				}
			}
			for p := range tt.before {
				if _, ok := tt.after[p]; !ok {
					changed = append(changed, p)
				}
			}
			sort.Strings(changed)
			got := l.SetupChanges(before, after, changed)
			if len(got) != len(tt.want) {
				t.Fatalf("SetupChanges(%v) = %q, want %d change(s) matching %q", changed, got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("change %d = %q, want it to contain %q", i, got[i], w)
				}
				if strings.ContainsAny(got[i].String(), "\x1b\x07\r") {
					t.Errorf("change %d carries control characters: %q", i, got[i])
				}
			}
		})
	}
}

func snapOf(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for p, c := range files {
		s.Files[p] = sandbox.File{Data: []byte(c)}
	}
	return s
}
