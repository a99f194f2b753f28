package bwrap

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestHostDirsReadOnly: the host directories a bwrap sandbox sees (/usr,
// the /etc entries bound from the host) are read-only
// in a test session and in the setup step, even when fixpoint runs as
// root and the sandbox uid maps to it.
func TestHostDirsReadOnly(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	var rnd [6]byte
	rand.Read(rnd[:])
	probe := "fixpoint-probe-" + hex.EncodeToString(rnd[:])
	dirs := []string{"/usr", "/usr/bin", "/usr/lib"}
	t.Cleanup(func() {
		for _, d := range dirs {
			os.Remove(filepath.Join(d, probe))
		}
	})
	var script strings.Builder
	for _, d := range dirs {
		fmt.Fprintf(&script, "touch %s/%s 2>/dev/null && echo WROTE %s; ", d, probe, d)
	}
	script.WriteString("(echo x >> /etc/os-release) 2>/dev/null && echo WROTE /etc/os-release; true")
	check := func(t *testing.T, out string) {
		t.Helper()
		if strings.Contains(out, "WROTE") {
			t.Errorf("the sandbox wrote a host directory:\n%s", out)
		}
		for _, d := range dirs {
			if _, err := os.Lstat(filepath.Join(d, probe)); err == nil {
				t.Errorf("%s/%s exists on the host", d, probe)
			}
		}
	}
	b, err := New(&Options{TmpSize: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("session", func(t *testing.T) {
		s, err := b.Start(t.Context(), sandbox.Spec{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", script.String()}, Limits: sandbox.Limits{Timeout: 30 * time.Second}})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		check(t, string(res.Stdout))
	})
	t.Run("setup step", func(t *testing.T) {
		project := hex.EncodeToString(rnd[:]) + "00"
		t.Cleanup(func() { os.RemoveAll(filepath.Join(depsDir(), project)) })
		var out strings.Builder
		_, err := b.Install(t.Context(), sandbox.InstallSpec{
			Key: "rootfs", Script: script.String(), Snapshot: &sandbox.Snapshot{Files: map[string]sandbox.File{}},
			Caches: []sandbox.CacheDir{{Name: "c", Target: "/tmp/c"}}, Labels: map[string]string{sandbox.LabelProject: project},
			Limits: sandbox.Limits{Timeout: time.Minute}, Output: &out,
		})
		if err != nil {
			t.Fatalf("Install: %v\n%s", err, out.String())
		}
		check(t, out.String())
	})
}
