package kubernetes

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func class(name string, mode *storagev1.VolumeBindingMode, isDefault bool) *storagev1.StorageClass {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "example.com/p", VolumeBindingMode: mode}
	if isDefault {
		c.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	}
	return c
}

// TestBindsImmediately: the setup pod waits for its claims only where the
// StorageClass binds them on creation; a class that binds for the first
// consumer needs the pod to exist first.
func TestBindsImmediately(t *testing.T) {
	imm, wffc := storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer
	for _, tc := range []struct {
		name       string
		configured string
		classes    []*storagev1.StorageClass
		want       bool
	}{
		{"configured immediate", "local", []*storagev1.StorageClass{class("local", &imm, false)}, true},
		{"configured, mode unset (the API's default is Immediate)", "local", []*storagev1.StorageClass{class("local", nil, false)}, true},
		{"configured first consumer", "local", []*storagev1.StorageClass{class("local", &wffc, false)}, false},
		{"configured but missing", "gone", []*storagev1.StorageClass{class("local", &imm, false)}, false},
		{"default class immediate", "", []*storagev1.StorageClass{class("a", &wffc, false), class("std", &imm, true)}, true},
		{"default class first consumer", "", []*storagev1.StorageClass{class("a", &imm, false), class("std", &wffc, true)}, false},
		{"no default class", "", []*storagev1.StorageClass{class("a", &imm, false)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, c := range tc.classes {
				if _, err := cs.StorageV1().StorageClasses().Create(t.Context(), c, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			b := &Backend{cs: cs, ns: "default", opts: Options{CacheStorageClass: tc.configured}}
			if got := b.bindsImmediately(t.Context()); got != tc.want {
				t.Errorf("bindsImmediately = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWaitClaimsBound: the wait returns once every claim is bound, and
// names the claim when one is deleted under it.
func TestWaitClaimsBound(t *testing.T) {
	imm := storagev1.VolumeBindingImmediate
	setup := func(t *testing.T) (*Backend, *fake.Clientset, []sandbox.CacheMount) {
		cs := fake.NewClientset(class("local", &imm, false))
		b := &Backend{cs: cs, ns: "default", opts: Options{CacheStorageClass: "local"}, cfg: &rest.Config{Host: "https://cluster.test"}}
		var mounts []sandbox.CacheMount
		for _, n := range []string{"fixpoint-deps-a-k", "fixpoint-deps-b-k"} {
			pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "default"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
			if _, err := cs.CoreV1().PersistentVolumeClaims("default").Create(t.Context(), pvc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			mounts = append(mounts, sandbox.CacheMount{Source: n})
		}
		return b, cs, mounts
	}
	t.Run("bound", func(t *testing.T) {
		b, cs, mounts := setup(t)
		done := make(chan error, 1)
		go func() { done <- b.waitClaimsBound(t.Context(), mounts) }()
		for _, m := range mounts {
			pvc, err := cs.CoreV1().PersistentVolumeClaims("default").Get(t.Context(), m.Source, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pvc.Status.Phase = corev1.ClaimBound
			if _, err := cs.CoreV1().PersistentVolumeClaims("default").UpdateStatus(t.Context(), pvc, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("waitClaimsBound = %v, want nil once both claims are bound", err)
		}
	})
	t.Run("deleted", func(t *testing.T) {
		b, cs, mounts := setup(t)
		done := make(chan error, 1)
		go func() { done <- b.waitClaimsBound(t.Context(), mounts) }()
		if err := cs.CoreV1().PersistentVolumeClaims("default").Delete(t.Context(), mounts[0].Source, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		err := <-done
		if err == nil || !strings.Contains(err.Error(), mounts[0].Source) || !strings.Contains(err.Error(), "deleted") {
			t.Fatalf("waitClaimsBound = %v, want an error naming the deleted claim %s", err, mounts[0].Source)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		b, _, mounts := setup(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.waitClaimsBound(ctx, mounts); err == nil {
			t.Fatal("waitClaimsBound on a cancelled context = nil, want its error")
		}
	})
}
