package docker

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/docker/docker/api/types/mount"
	"golang.org/x/tools/txtar"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

var update = flag.Bool("update", false, "rewrite testdata/hardened.golden")

// TestHardenedContainer: the container a session runs in, for each engine
// and runtime, is the golden file's (go test -run HardenedContainer
// -update rewrites it; review the diff: it is the sandbox's isolation).
// Whatever the golden says, the properties isolation rests on are also
// asserted, so an -update cannot quietly drop one.
func TestHardenedContainer(t *testing.T) {
	base := containerParams{
		Image:  "fixpoint-sandbox-go",
		User:   "65534:65534",
		Env:    []string{"PATH=" + defaultPath, "HOME=/tmp"},
		Labels: map[string]string{"fixpoint.session": "fixpoint-000000000000"},
		Mounts: []mount.Mount{
			{Type: mount.TypeVolume, Source: "fixpoint-supervisor-x", Target: supervisorDir, ReadOnly: true},
			{Type: mount.TypeVolume, Source: "fixpoint-gomod", Target: "/go/pkg/mod", ReadOnly: true},
		},
		Limits: supclient.Defaults(sandbox.Limits{}),
		Kind:   "docker",
	}
	cases := []struct {
		name string
		edit func(*containerParams)
	}{
		{name: "docker", edit: func(*containerParams) {}},
		{name: "docker-gvisor", edit: func(p *containerParams) { p.Runtime = "runsc" }},
		{name: "podman", edit: func(p *containerParams) { p.Kind = "podman"; p.User = "1000" }},
		{name: "sizes", edit: func(p *containerParams) { p.WorkspaceSize, p.TmpSize = 2<<30, 64<<20 }},
	}
	var ar txtar.Archive
	for _, c := range cases {
		p := base
		c.edit(&p)
		cfg, hc := hardenedContainer(p)
		if hc.NetworkMode != "none" || !hc.ReadonlyRootfs || !slices.Equal(hc.CapDrop, []string{"ALL"}) ||
			!slices.Contains(hc.SecurityOpt, "no-new-privileges") || hc.Privileged || len(hc.CapAdd) != 0 ||
			hc.PidsLimit == nil || *hc.PidsLimit <= 0 || hc.Memory <= 0 || hc.MemorySwap != hc.Memory ||
			hc.IpcMode != "private" || hc.PidMode != "" || len(hc.Binds) != 0 || len(hc.Devices) != 0 {
			t.Errorf("%s: the container is not isolated: %+v", c.name, hc)
		}
		for _, m := range hc.Mounts {
			if m.Type != mount.TypeVolume || !m.ReadOnly && m.Target == supervisorDir {
				t.Errorf("%s: mount %+v: want volumes only, the supervisor read-only", c.name, m)
			}
		}
		data, err := json.MarshalIndent(struct {
			Config, HostConfig any
		}{cfg, hc}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		ar.Files = append(ar.Files, txtar.File{Name: c.name, Data: append(data, '\n')})
	}
	got := txtar.Format(&ar)
	golden := filepath.Join("testdata", "hardened.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run HardenedContainer -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("hardenedContainer differs from %s (review, then -update):\n%s", golden, got)
	}
}
