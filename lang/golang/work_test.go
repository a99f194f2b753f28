package golang

import (
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func TestWorkspaceUses(t *testing.T) {
	tests := []struct {
		name, gowork string
		want         []string
	}{
		{"block", "go 1.22\n\nuse (\n\t.\n\t./a // the API\n\t\"./b\"\n)\n", []string{".", "a", "b"}},
		{"lines", "go 1.22\nuse ./a\nuse ./tools/x\n", []string{"a", "tools/x"}},
		{"outside and duplicates dropped", "use (\n\t../other\n\t/abs\n\t./a\n\ta\n)\n", []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workspaceUses(tt.gowork); !slices.Equal(got, tt.want) {
				t.Errorf("workspaceUses(%q) = %q, want %q", tt.gowork, got, tt.want)
			}
		})
	}
}

// In workspace mode go rejects -mod=mod, and `./...` at a root that is no
// module matches nothing: a go.work project is tested over its members,
// with GOFLAGS go accepts there.
func TestWorkspaceProject(t *testing.T) {
	s := snapOf(map[string]string{
		"go.work":  "go 1.22\n\nuse (\n\t./a\n\t./b\n)\n",
		"a/go.mod": "module example.com/a\n\ngo 1.22\n\nrequire github.com/google/go-cmp v0.6.0\n",
		"b/go.mod": "module example.com/b\n\ngo 1.22\n",
	})
	l := Language{}
	if !l.Detect(s) {
		t.Fatal("Detect = false for a go.work project without a root go.mod")
	}
	r := l.TestCommand(s)
	if want := []string{"go", "test", "-json", "./a/...", "./b/..."}; !slices.Equal(r.Args, want) {
		t.Errorf("TestCommand args = %q, want %q", r.Args, want)
	}
	// The format maps each member's packages to its directory: a failure
	// in example.com/b/x is reported at b/x/x_test.go.
	out := `{"Action":"output","Package":"example.com/b/x","Test":"TestX","Output":"    x_test.go:7: boom\n"}` + "\n" +
		`{"Action":"fail","Package":"example.com/b/x","Test":"TestX","Elapsed":0}` + "\n"
	rep := testrun.Parse(r, &sandbox.Result{ExitCode: 1, Stdout: []byte(out)}, nil)
	if f := rep.Failures(); len(f) != 1 || f[0].File != "b/x/x_test.go" {
		t.Errorf("failures = %+v, want one at b/x/x_test.go (the member's directory)", f)
	}
	st := l.SetupStep(s)
	if st == nil {
		t.Fatal("SetupStep = nil for a workspace whose member requires a module")
	}
	for _, e := range append(slices.Clone(st.Env), st.TestEnv...) {
		if strings.HasPrefix(e, "GOFLAGS=") && strings.Contains(e, "-mod=mod") {
			t.Errorf("setup env %q: go rejects -mod=mod in workspace mode", e)
		}
	}
	if !strings.Contains(st.Script, "./a/...") || strings.Contains(st.Script, "go mod download") {
		t.Errorf("setup script %q: want go list over the members (go mod download needs a main module)", st.Script)
	}
	req, err := l.Requirement(s)
	if err != nil || req == nil || !strings.HasPrefix(req.Source, "go.work") {
		t.Errorf("Requirement = %+v, %v; want go.work's go line", req, err)
	}
}

func TestModFlags(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"module", map[string]string{"go.mod": "module m\n"}, "-mod=mod -buildvcs=false"},
		{"workspace", map[string]string{"go.mod": "module m\n", "go.work": "use .\n"}, "-buildvcs=false"},
		{"vendored", map[string]string{"go.mod": "module m\n", "vendor/modules.txt": "# x\n"}, "-buildvcs=false"},
	}
	for _, tt := range tests {
		if got := modFlags(snapOf(tt.files)); got != tt.want {
			t.Errorf("%s: modFlags = %q, want %q", tt.name, got, tt.want)
		}
	}
}
