package bwrap_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestDependencyCacheMountedReadOnly: a test session sees the setup
// phase's dependency cache through a read-only mount, whatever the file
// modes say. Run as root the sessions use other uids and the modes alone
// stop a write; run as a normal user the session's uid owns the cache, so
// the mount is the only thing that keeps one run from poisoning the cache
// the next run trusts. The mount flags are read from /proc/self/mountinfo
// inside the sandbox, so the check holds for either way fixpoint runs.
func TestDependencyCacheMountedReadOnly(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	limits := sandbox.Limits{Timeout: 2 * time.Minute}
	key := fmt.Sprintf("ca5e%012x", time.Now().UnixNano()&0xffffffffffff)
	inst, err := b.Install(t.Context(), sandbox.InstallSpec{
		Key:      key,
		Snapshot: &sandbox.Snapshot{Files: map[string]sandbox.File{"package.json": {Data: []byte("{}\n")}}},
		Labels:   map[string]string{sandbox.LabelProject: "ca5e" + strings.Repeat("0", 12)},
		Script:   "mkdir -p node_modules/dep && echo dep > node_modules/dep/index.js",
		Caches:   []sandbox.CacheDir{{Name: "node_modules", Target: "/workspace/node_modules", Writable: []string{".cache"}}},
		Limits:   limits,
	})
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	sess, err := b.Start(t.Context(), sandbox.Spec{Caches: inst.Mounts})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sess.Close()
	if _, err := sess.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{"package.json": {Data: []byte("{}\n")}}}); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"cat", "/proc/self/mountinfo"}, Limits: limits})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("cat /proc/self/mountinfo: %v, %+v", err, res)
	}
	mounts := map[string]string{} // mount point -> per-mount options
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 {
			mounts[f[4]] = f[5]
		}
	}
	opts, ok := mounts["/workspace/node_modules"]
	if !ok {
		t.Fatalf("no mount at /workspace/node_modules inside the sandbox; mountinfo:\n%s", res.Stdout)
	}
	if !hasOption(opts, "ro") {
		t.Errorf("the dependency cache is mounted %q: a test run could rewrite what the next run trusts; want ro", opts)
	}
	// The writable layer over .cache is its own (fresh) mount, not the cache.
	if opts, ok := mounts["/workspace/node_modules/.cache"]; !ok || hasOption(opts, "ro") {
		t.Errorf("node_modules/.cache: mounted %v with %q; want a writable layer of its own", ok, opts)
	}
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}
