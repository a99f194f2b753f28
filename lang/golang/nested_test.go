package golang

import (
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// A repository whose module is in a sub-directory (evanphx/json-patch:
// v5/go.mod, GOPATH-era code at the root) is tested as its user does,
// `cd v5 && go test ./...`: no longer "no test command".
func TestNestedModule(t *testing.T) {
	s := snapOf(map[string]string{
		"patch.go":             "package jsonpatch\n",
		"v5/go.mod":            "module github.com/evanphx/json-patch/v5\n\ngo 1.18\n\nrequire github.com/pkg/errors v0.9.1\n",
		"v5/go.sum":            "github.com/pkg/errors v0.9.1 h1:x\n",
		"v5/patch.go":          "package jsonpatch\n",
		"v5/internal/x/go.mod": "module deeper\n", // deeper: not the main module
		"testdata/go.mod":      "module ignored\n",
		".git/x/go.mod":        "module ignored\n",
	})
	l := Language{}
	if l.Detect(s) || !l.DetectNested(s) {
		t.Fatalf("Detect = %v, DetectNested = %v; want false, true", l.Detect(s), l.DetectNested(s))
	}
	r := l.TestCommand(s)
	if want := []string{"go", "-C", "v5", "test", "-json", "./..."}; !slices.Equal(r.Args, want) {
		t.Errorf("TestCommand args = %q, want %q", r.Args, want)
	}
	// The v5 module's packages are in v5/: a failure's file is named from
	// the workspace root.
	events := `{"Action":"run","Package":"github.com/evanphx/json-patch/v5","Test":"TestX"}
{"Action":"output","Package":"github.com/evanphx/json-patch/v5","Test":"TestX","Output":"    patch_test.go:12: boom\n"}
{"Action":"fail","Package":"github.com/evanphx/json-patch/v5","Test":"TestX","Elapsed":0.1}
`
	if r.Format == nil {
		t.Fatal("TestCommand has no format")
	}
	got := r.Format.Parse(testrun.Input{Stdout: []byte(events)})
	if len(got.Tests) != 1 || got.Tests[0].File != "v5/patch_test.go" {
		t.Errorf("a failure in the v5 module: %+v; want file v5/patch_test.go", got.Tests)
	}
	if u := l.Untrusted(r); !slices.Equal(u.Args, []string{"go", "-C", "v5", "test", "-count=1", "-json", "./..."}) {
		t.Errorf("Untrusted args = %q, want -count=1 after `test`", u.Args)
	}
	st := l.SetupStep(s)
	if st == nil || !strings.Contains(st.Script, "go -C 'v5' mod download") || !strings.Contains(st.Script, "go -C 'v5' list") {
		t.Fatalf("SetupStep = %+v, want go mod download in v5", st)
	}
	req, err := l.Requirement(s)
	if err != nil || req == nil || req.Source != "v5/go.mod (go 1.18)" {
		t.Errorf("Requirement = %+v, %v; want v5/go.mod's go line", req, err)
	}
	// The setup is keyed by the nested go.mod and go.sum.
	s2 := snapOf(map[string]string{
		"v5/go.mod": "module github.com/evanphx/json-patch/v5\n\ngo 1.18\n\nrequire github.com/pkg/errors v0.9.2\n",
		"v5/go.sum": "github.com/pkg/errors v0.9.1 h1:x\n",
	})
	if st.Key(s, "") == l.SetupStep(s2).Key(s2, "") {
		t.Errorf("the setup key ignores v5/go.mod")
	}
}

// Several modules below the root and none at the root: no guess, but a
// message naming them and the test_cmd to set.
func TestNestedModulesAmbiguous(t *testing.T) {
	s := snapOf(map[string]string{
		"api/go.mod": "module example.com/api\n",
		"cli/go.mod": "module example.com/cli\n",
	})
	l := Language{}
	if !l.DetectNested(s) {
		t.Fatal("DetectNested = false")
	}
	r := l.TestCommand(s)
	if len(r.Args) != 0 || r.Name != testrun.RunnerCustom {
		t.Fatalf("TestCommand = %+v, want no command", r)
	}
	for _, want := range []string{"api/", "cli/", `test_cmd = "go -C api test ./..."`} {
		if !strings.Contains(r.Missing, want) {
			t.Errorf("Missing = %q, lacks %q", r.Missing, want)
		}
	}
	// A root module wins over nested ones (tools/go.mod).
	root := snapOf(map[string]string{"go.mod": "module example.com/m\n", "tools/go.mod": "module tools\n"})
	if got := l.TestCommand(root).Args; !slices.Equal(got, []string{"go", "test", "-json", "./..."}) {
		t.Errorf("with a root go.mod: %q", got)
	}
}
