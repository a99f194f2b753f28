package kubernetes

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestReapDeadOwner: Reap deletes a pod whose owner process on this host
// is gone, and keeps the pods of live owners (this process's) and of
// other hosts.
func TestReapDeadOwner(t *testing.T) {
	b, err := New(t.Context(), &Options{Kubeconfig: sandboxtest.RequireKubeconfig(t), PullPolicy: "Never", NoReap: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer b.Close()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, edit func(map[string]string)) {
		labels := ownerLabels(name, time.Now())
		edit(labels)
		_, uid := newSessionName()
		pod := hardenedPod(podParams{Name: name, Namespace: b.ns, Image: "fixpoint-sandbox-python", PullPolicy: "Never", UID: uid,
			Labels: labels, Limits: supclient.Defaults(sandbox.Limits{})})
		if _, err := b.cs.CoreV1().Pods(b.ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		t.Cleanup(func() { deletePod(context.Background(), b.cs, b.ns, name) })
	}
	suffix := strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	deadPod, livePod, otherPod := "fixpoint-reap-dead-"+suffix, "fixpoint-reap-live-"+suffix, "fixpoint-reap-other-"+suffix
	mk(deadPod, func(l map[string]string) { l[LabelPID] = strconv.Itoa(dead.Process.Pid); l[LabelPIDStart] = "" })
	mk(livePod, func(map[string]string) {})
	mk(otherPod, func(l map[string]string) { l[LabelHost] = "another-host"; l[LabelPID] = strconv.Itoa(dead.Process.Pid) })
	n, err := Reap(t.Context(), b.cs, b.ns)
	if err != nil {
		t.Fatalf("Reap: %v", err)
	}
	if n < 1 {
		t.Errorf("Reap removed %d pods, want the dead owner's", n)
	}
	gone := func(name string) bool {
		p, err := b.cs.CoreV1().Pods(b.ns).Get(t.Context(), name, metav1.GetOptions{})
		return err != nil || p.DeletionTimestamp != nil
	}
	if !gone(deadPod) {
		t.Errorf("the dead owner's pod %s is still there", deadPod)
	}
	if gone(livePod) || gone(otherPod) {
		t.Errorf("Reap deleted a live owner's pod or another host's: live gone %v, other gone %v", gone(livePod), gone(otherPod))
	}
}
