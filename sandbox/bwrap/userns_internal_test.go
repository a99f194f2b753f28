package bwrap

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// nestedUserns is a script that exits 3 when it can create a user
// namespace (the first step of most kernel exploits from a sandbox: it
// gives the process every capability over new namespaces).
const nestedUserns = `if unshare --user true 2>/dev/null; then echo NESTED-USERNS; exit 3; fi; echo contained`

// TestNoNestedUserNamespaces: code in a bwrap sandbox, a test session's or
// the setup step's, cannot create a user namespace (bwrap
// --disable-userns), although the host lets unprivileged users do it.
func TestNoNestedUserNamespaces(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	sandboxtest.RequireCommand(t, "unshare")
	if out, err := exec.Command("unshare", "--user", "true").CombinedOutput(); err != nil {
		t.Fatalf("the host does not allow unprivileged user namespaces (%v: %s): the case proves nothing here", err, out)
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
		res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", nestedUserns}, Limits: sandbox.Limits{Timeout: 30 * time.Second}})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if res.ExitCode != 0 || strings.Contains(string(res.Stdout), "NESTED") {
			t.Errorf("a test session created a user namespace: exit %d, %s%s", res.ExitCode, res.Stdout, res.Stderr)
		}
	})
	t.Run("setup step", func(t *testing.T) {
		var rnd [8]byte
		rand.Read(rnd[:])
		project := hex.EncodeToString(rnd[:]) // its own deps directory, removed after
		t.Cleanup(func() { os.RemoveAll(filepath.Join(depsDir(), project)) })
		var out strings.Builder
		_, err := b.Install(t.Context(), sandbox.InstallSpec{
			Key: "userns", Script: nestedUserns, Snapshot: &sandbox.Snapshot{Files: map[string]sandbox.File{}},
			Caches: []sandbox.CacheDir{{Name: "c", Target: "/tmp/c"}}, Labels: map[string]string{sandbox.LabelProject: project},
			Limits: sandbox.Limits{Timeout: time.Minute}, Output: &out,
		})
		if err != nil || !strings.Contains(out.String(), "contained") {
			t.Errorf("the setup step created a user namespace: %v\n%s", err, out.String())
		}
	})
}

// ownSession exits 3 when the process shares its session with a process
// outside the sandbox's pid namespace (getsid reports 0 then): without
// bwrap --new-session, sandboxed code can push input into the terminal
// fixpoint runs in (TIOCSTI) where the kernel still allows it.
const ownSession = `sid=$(python3 -c 'import os; print(os.getsid(0))'); echo "sid=$sid"; test "$sid" != 0 || exit 3`

// TestOwnSession: a test session's commands and the setup step run in a
// session of their own (bwrap --new-session).
func TestOwnSession(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	sandboxtest.RequireCommand(t, "python3")
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
		res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", ownSession}, Limits: sandbox.Limits{Timeout: 30 * time.Second}})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if res.ExitCode != 0 {
			t.Errorf("a test session shares the caller's session: exit %d, %s%s", res.ExitCode, res.Stdout, res.Stderr)
		}
	})
	t.Run("setup step", func(t *testing.T) {
		var rnd [8]byte
		rand.Read(rnd[:])
		project := hex.EncodeToString(rnd[:])
		t.Cleanup(func() { os.RemoveAll(filepath.Join(depsDir(), project)) })
		var out strings.Builder
		_, err := b.Install(t.Context(), sandbox.InstallSpec{
			Key: "session", Script: ownSession, Snapshot: &sandbox.Snapshot{Files: map[string]sandbox.File{}},
			Caches: []sandbox.CacheDir{{Name: "c", Target: "/tmp/c"}}, Labels: map[string]string{sandbox.LabelProject: project},
			Limits: sandbox.Limits{Timeout: time.Minute}, Output: &out,
		})
		if err != nil {
			t.Errorf("the setup step shares the caller's session: %v\n%s", err, out.String())
		}
	})
}
