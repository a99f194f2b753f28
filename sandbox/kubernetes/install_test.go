package kubernetes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/kubernetes"
)

// TestInstallCachesByKey: a setup step fills a cache claim once per key:
// the second Install with the same key is a cache hit that starts no
// setup pod; a session mounts the claim read-only (it reads what the step
// wrote and cannot write there, not even its own uid's files); a new key
// for the same project replaces the old claim. The step runs without pod
// network: nothing it reaches is checked here (the e2e test in
// cmd/fixpoint downloads a real module through the relay).
func TestInstallCachesByKey(t *testing.T) {
	b := newBackend(t, nil)
	project := fmt.Sprintf("fp%014x", time.Now().UnixNano()&0xffffffffffffff)
	install := func(key string) *sandbox.InstallResult {
		t.Helper()
		res, err := b.Install(t.Context(), sandbox.InstallSpec{
			Image: testImage, Key: key, Labels: map[string]string{sandbox.LabelProject: project},
			Snapshot: &sandbox.Snapshot{Files: map[string]sandbox.File{"requirements.txt": {Data: []byte("dep==1\n")}}},
			Script:   "cat requirements.txt > /deps/venv/installed && id -u > /deps/venv/uid",
			Caches:   []sandbox.CacheDir{{Name: "venv", Target: "/deps/venv"}},
			Limits:   sandbox.Limits{Timeout: 2 * time.Minute},
		})
		if err != nil {
			t.Fatalf("Install(%s): %v", key, err)
		}
		return res
	}
	claims := func() map[string]map[string]string {
		list, err := b.Clientset().CoreV1().PersistentVolumeClaims(b.Namespace()).List(context.Background(),
			metav1.ListOptions{LabelSelector: "fixpoint.project=" + project})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]string{}
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				out[p.Name] = p.Labels
			}
		}
		return out
	}
	t.Cleanup(func() {
		for name := range claims() {
			b.Clientset().CoreV1().PersistentVolumeClaims(b.Namespace()).Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	key1 := fmt.Sprintf("aa%014x", time.Now().UnixNano()&0xffffffffffffff)
	first := install(key1)
	if first.Cached || len(first.Mounts) != 1 || first.Mounts[0].Target != "/deps/venv" || !strings.HasPrefix(first.Mounts[0].Source, "fixpoint-deps-venv-") {
		t.Fatalf("first Install = %+v", first)
	}
	if l := claims()[first.Mounts[0].Source]; l[kubernetes.LabelSetupDone] != "true" || l[kubernetes.LabelSetupKey] != key1 {
		t.Errorf("claim %s labels %v, want done and keyed %s", first.Mounts[0].Source, l, key1)
	}
	pods := func() int {
		list, err := b.Clientset().CoreV1().Pods(b.Namespace()).List(context.Background(), metav1.ListOptions{LabelSelector: "fixpoint.setup=true"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				n++
			}
		}
		return n
	}
	setupPods := pods()
	if again := install(key1); !again.Cached || again.Mounts[0].Source != first.Mounts[0].Source {
		t.Errorf("second Install with the same key = %+v, want the cached claim", again)
	}
	if n := pods(); n > setupPods {
		t.Errorf("a cache hit started a setup pod (%d running, %d before)", n, setupPods)
	}

	sess, err := b.Start(t.Context(), sandbox.Spec{Image: testImage, Caches: first.Mounts})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sess.Close()
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c",
		`cat /deps/venv/installed; echo x >> /deps/venv/installed && echo WROTE; touch /deps/venv/new && echo CREATED; id -u; cat /deps/venv/uid`}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	if !strings.HasPrefix(out, "dep==1\n") || strings.Contains(out, "WROTE") || strings.Contains(out, "CREATED") {
		t.Errorf("the session's view of the cache: %q (stderr %q); want the step's file, read-only", out, res.Stderr)
	}
	if !strings.Contains(string(res.Stderr), "Read-only file system") {
		t.Errorf("writes to the cache failed for another reason: %q", res.Stderr)
	}

	key2 := fmt.Sprintf("bb%014x", time.Now().UnixNano()&0xffffffffffffff)
	second := install(key2)
	got := claims()
	if _, ok := got[second.Mounts[0].Source]; !ok || len(got) != 1 {
		t.Errorf("after a new key the project's claims are %v, want only %s", got, second.Mounts[0].Source)
	}
}
