package golang

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// The host's module cache is offered only to a project that may need a
// module from it: copying it into a docker volume costs as much as the
// whole cache, so a module that requires nothing must not pay for it.
func TestHostCachesOnlyForProjectsWithRequirements(t *testing.T) {
	t.Setenv("GOMODCACHE", t.TempDir())
	snap := func(files map[string]string) *sandbox.Snapshot {
		s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
		for k, v := range files {
			s.Files[k] = sandbox.File{Data: []byte(v)}
		}
		return s
	}
	tests := []struct {
		name  string
		snap  *sandbox.Snapshot
		mount bool
	}{
		{"no require", snap(map[string]string{"go.mod": "module example.com/a\n\ngo 1.22\n", "a.go": "package a\n"}), false},
		{"require line", snap(map[string]string{"go.mod": "module example.com/a\n\ngo 1.22\n\nrequire github.com/google/go-cmp v0.6.0\n"}), true},
		{"require block", snap(map[string]string{"go.mod": "module example.com/a\n\nrequire (\n\tgithub.com/google/go-cmp v0.6.0\n)\n"}), true},
		{"go.work", snap(map[string]string{"go.mod": "module example.com/a\n", "go.work": "go 1.22\n\nuse ./b\n"}), true},
		{"no go.mod", snap(map[string]string{"a.go": "package a\n"}), true},
		{"no snapshot", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Language{}.HostCaches(tt.snap)
			if tt.mount != (len(got) == 1) {
				t.Fatalf("HostCaches = %+v, want a mount: %v", got, tt.mount)
			}
			if tt.mount && (got[0].Target != ModCache || got[0].HostDir == "") {
				t.Errorf("mount = %+v, want the host dir at %s", got[0], ModCache)
			}
		})
	}
}
