package kubernetes_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/kubernetes"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const testImage = "fixpoint-sandbox-python"

// newBackend connects to the test cluster (sandboxtest.RequireKubeconfig)
// with images preloaded on the node (pull policy Never).
func newBackend(t *testing.T, edit func(*kubernetes.Options)) *kubernetes.Backend {
	t.Helper()
	// The CI cluster's cache StorageClass (.ci/k8s-up: local volumes; the
	// cluster has no provisioner and no default class).
	opts := &kubernetes.Options{Kubeconfig: sandboxtest.RequireKubeconfig(t), PullPolicy: "Never", CacheStorageClass: "fixpoint-ci-local", CacheSize: "1Gi"}
	if edit != nil {
		edit(opts)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	b, err := kubernetes.New(ctx, opts)
	if err != nil {
		t.Fatalf("kubernetes.New(%s): %v", opts.Kubeconfig, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// requireNoPod fails when the session's pod still exists (or is going).
func requireNoPod(t *testing.T, b *kubernetes.Backend, session string) {
	t.Helper()
	list, err := b.Clientset().CoreV1().Pods(b.Namespace()).List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.LabelSession + "=" + session})
	if err != nil {
		t.Fatalf("list pods of %s: %v", session, err)
	}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			t.Errorf("pod %s of session %s is left behind (phase %s)", p.Name, session, p.Status.Phase)
		}
	}
}

func TestConformance(t *testing.T) {
	b := newBackend(t, nil)
	sandboxtest.Conformance(t, b, sandbox.Spec{Image: testImage}, redact.IsSecretPath)
}

// TestSessionRunsThroughOneStream: a session's commands, files and exit
// codes work, and Close deletes its pod.
func TestSessionRunsThroughOneStream(t *testing.T) {
	b := newBackend(t, nil)
	sess, err := b.Start(t.Context(), sandbox.Spec{Image: testImage})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s := sess.(*kubernetes.Session)
	name := s.Name()
	defer func() {
		s.Close()
		requireNoPod(t, b, name)
	}()
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{"calc.py": {Data: []byte("def add(a, b):\n    return a + b\n")}}}
	if _, err := s.Sync(t.Context(), snap); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	for i := range 3 {
		res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"python3", "-c", "import calc, sys; print(calc.add(2, 3)); sys.exit(3)"}})
		if err != nil {
			t.Fatalf("Run %d: %v", i, err)
		}
		if res.ExitCode != 3 || string(res.Stdout) != "5\n" {
			t.Errorf("Run %d = exit %d stdout %q stderr %q, want 3 and 5", i, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := s.Run(t.Context(), sandbox.Command{Args: []string{"true"}}); err != sandbox.ErrClosed {
		t.Errorf("Run after Close = %v, want ErrClosed", err)
	}
}

// TestMissingImage: an image the node lacks (pull policy Never) fails
// Start with sandbox.ErrImageMissing and leaves no pod.
func TestMissingImage(t *testing.T) {
	b := newBackend(t, nil)
	_, err := b.Start(t.Context(), sandbox.Spec{Image: "fixpoint-sandbox-no-such-image:v0"})
	if err == nil || !strings.Contains(err.Error(), "fixpoint-sandbox-no-such-image") {
		t.Fatalf("Start(missing image) = %v, want an error naming the image", err)
	}
	if !errorsIs(err, sandbox.ErrImageMissing) {
		t.Errorf("Start(missing image) = %v, want ErrImageMissing", err)
	}
}

// TestEscape runs the shared escape battery (sandboxtest.Escape) in one
// hardened pod.
func TestEscape(t *testing.T) {
	e := sandboxtest.EscapeHost(t, "FIXPOINT_CANARY_k8s_5e1d")
	b := newBackend(t, func(o *kubernetes.Options) { o.WorkspaceSize, o.TmpSize = 32<<20, 32<<20 })
	sess, err := b.Start(t.Context(), sandbox.Spec{Image: testImage, Limits: sandboxtest.EscapeLimits()})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s := sess.(*kubernetes.Session)
	name := s.Name()
	defer func() {
		s.Close()
		requireNoPod(t, b, name)
	}()
	id, err := s.Run(t.Context(), sandbox.Command{Args: []string{"id", "-u"}})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := b.Clientset().CoreV1().Pods(b.Namespace()).Get(t.Context(), s.Name(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var unreachable []string
	for _, ip := range pod.Status.HostIPs {
		unreachable = append(unreachable, ip.IP)
	}
	e.Session, e.UID = s, strings.TrimSpace(string(id.Stdout))
	// fixpoint-sandbox-python's own ENV; nothing Kubernetes injects
	// (KUBERNETES_SERVICE_HOST, HOSTNAME) may reach a command.
	e.Allowed = []string{"PYTHONDONTWRITEBYTECODE"}
	e.Unreachable = unreachable
	e.ForkBombMayOOM = true
	e.Ours = func(line string) bool {
		_, cmd, _ := strings.Cut(line, " ")
		return strings.HasPrefix(line, "1 /bin/sh -c read _") || strings.HasPrefix(cmd, "/.fixpoint/supervisor")
	}
	e.After = func(t *testing.T) {
		if s.Name() != name {
			t.Errorf("the case replaced the pod (%s -> %s)", name, s.Name())
		}
	}
	sandboxtest.Escape(t, e)
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
