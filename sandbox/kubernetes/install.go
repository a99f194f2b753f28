package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

// Labels of the dependency cache PersistentVolumeClaims.
const (
	LabelCache     = "fixpoint.cache"      // "deps"
	LabelCacheName = "fixpoint.cache.name" // the cache's short name: "gomod"
	LabelSetupKey  = "fixpoint.setup.key"  // the setup step's cache key
	LabelSetupDone = "fixpoint.setup.done" // "true" once the step succeeded
)

// caPodPath is where the host's CA bundle is copied in the setup pod.
const caPodPath = "/tmp/.fixpoint-ca.crt"

// defaultCacheSize is each cache claim's requested size.
const defaultCacheSize = "4Gi"

// Install runs a dependency install step in a setup pod, unless claims
// for spec.Key exist and are marked done. Each cache is a
// PersistentVolumeClaim "fixpoint-deps-<name>-<key>" of the user's
// storage class (Options.CacheStorageClass; "" = the cluster's default),
// labelled with the project and key; the claims are marked done
// (LabelSetupDone) only after the step succeeded, so a step that was
// interrupted is redone. The setup pod is hardened as a test pod (non-root,
// read-only root, no capabilities, no network); its caches are writable
// (fsGroup = its uid), and its only way out is the supervisor's relay
// (tunnel.go) to the registries of the step or the user's proxy
// (egress.go). Test pods mount the claims read-only ([Backend.Start]).
func (b *Backend) Install(ctx context.Context, spec sandbox.InstallSpec) (*sandbox.InstallResult, error) {
	if spec.Image == "" || spec.Key == "" || len(spec.Caches) == 0 {
		return nil, errors.New("kubernetes install: image, key and caches are required")
	}
	res := &sandbox.InstallResult{}
	for _, c := range spec.Caches {
		res.Mounts = append(res.Mounts, sandbox.CacheMount{Source: claimName(c.Name, spec.Key), Target: c.Target, Name: c.Name, Writable: writableNames(c.Writable)})
	}
	pvcs := b.cs.CoreV1().PersistentVolumeClaims(b.ns)
	done := true
	for _, m := range res.Mounts {
		pvc, err := pvcs.Get(ctx, m.Source, metav1.GetOptions{})
		if err != nil || pvc.DeletionTimestamp != nil || pvc.Labels[LabelSetupDone] != "true" {
			done = false
			break
		}
	}
	if done {
		res.Cached = true
		return res, nil
	}
	if err := b.checkStorageClass(ctx); err != nil {
		return nil, err
	}
	project := labelValue(spec.Labels[sandbox.LabelProject])
	for i, c := range spec.Caches {
		name := res.Mounts[i].Source
		if err := b.deleteClaim(ctx, name); err != nil { // half-filled by an interrupted step
			return nil, err
		}
		if _, err := pvcs.Create(ctx, b.cacheClaim(name, c.Name, spec.Key, project), metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create PersistentVolumeClaim %s in namespace %s: %w; fixpoint needs to create persistentvolumeclaims there (RBAC)", name, b.ns, err)
		}
	}
	cleanup := func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, m := range res.Mounts {
			if err := b.deleteClaim(dctx, m.Source); err != nil {
				b.log.Warn("delete cache claim", "claim", m.Source, "err", err)
			}
		}
	}
	if err := b.runInstall(ctx, spec, res.Mounts); err != nil {
		cleanup()
		return nil, err
	}
	patch := []byte(`{"metadata":{"labels":{"` + LabelSetupDone + `":"true"}}}`)
	for _, m := range res.Mounts {
		if _, err := pvcs.Patch(ctx, m.Source, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			cleanup()
			return nil, fmt.Errorf("mark cache claim %s done: %w", m.Source, err)
		}
	}
	for _, c := range spec.Caches {
		b.pruneClaims(ctx, project, c.Name, spec.Key)
	}
	return res, nil
}

var badNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// claimName is the claim of cache name for key: a DNS-1123 name.
func claimName(name, key string) string {
	n := strings.Trim(badNameChars.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(n) > 40 {
		n = n[:40]
	}
	return "fixpoint-deps-" + n + "-" + strings.Trim(badNameChars.ReplaceAllString(strings.ToLower(key), "-"), "-")
}

// writableNames keeps the valid CacheMount.Writable names.
func writableNames(names []string) []string {
	var out []string
	for _, n := range names {
		if sandbox.WritableName(n) {
			out = append(out, n)
		}
	}
	return out
}

// cacheClaim is a dependency cache's PersistentVolumeClaim (golden in
// testdata/claim.golden).
func (b *Backend) cacheClaim(name, cache, key, project string) *corev1.PersistentVolumeClaim {
	return cacheClaim(name, b.ns, b.opts.CacheStorageClass, b.cacheSize, map[string]string{
		LabelManaged: "true", LabelCache: "deps", LabelCacheName: labelValue(cache), LabelSetupKey: labelValue(key),
		sandbox.LabelProject: project, LabelHost: labelValue(hostname()),
	})
}

func cacheClaim(name, namespace, class string, size resource.Quantity, labels map[string]string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			// One node mounts it at a time, read-write for the setup pod
			// and then read-only for any number of test pods there: what
			// every provisioner offers (ReadOnlyMany is rare).
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if class != "" {
		pvc.Spec.StorageClassName = &class
	}
	return pvc
}

// deleteClaim deletes a claim and waits until it is gone (a claim a pod
// still mounts stays until the pod ends).
func (b *Backend) deleteClaim(ctx context.Context, name string) error {
	pvcs := b.cs.CoreV1().PersistentVolumeClaims(b.ns)
	err := pvcs.Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete PersistentVolumeClaim %s: %w", name, err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		if _, err := pvcs.Get(wctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("PersistentVolumeClaim %s still there a minute after its deletion (a pod still mounts it, or the cluster's pvc-protection controller does not run)", name)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// pruneClaims deletes the project's claims of cache with another key: an
// older lockfile's dependencies. A claim a running session mounts is
// removed by the cluster once that session ends.
func (b *Backend) pruneClaims(ctx context.Context, project, cache, key string) {
	if project == "" {
		return
	}
	sel := LabelCache + "=deps," + LabelCacheName + "=" + labelValue(cache) + "," + sandbox.LabelProject + "=" + project
	list, err := b.cs.CoreV1().PersistentVolumeClaims(b.ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return
	}
	for _, p := range list.Items {
		if p.Labels[LabelSetupKey] != labelValue(key) && p.DeletionTimestamp == nil {
			b.cs.CoreV1().PersistentVolumeClaims(b.ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
		}
	}
}

// runInstall runs the step in a setup pod with the claims mounted
// writable and the relay as its network.
func (b *Backend) runInstall(ctx context.Context, spec sandbox.InstallSpec, mounts []sandbox.CacheMount) error {
	timeout := spec.Limits.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+startTimeout)
	defer cancel()
	l := spec.Limits
	if l.Memory < 2<<30 {
		l.Memory = 2 << 30 // installers (npm) need more than a test run
	}
	// The setup pod runs the same image a test pod would: from the user's
	// registry when fixpoint's images were pushed there (images.go).
	img, err := b.imageRef(spec.Image)
	if err != nil {
		return err
	}
	var writable []string
	// /tmp holds the installers' own download caches (npm's ~/.npm), as
	// the docker setup container's 2 GiB tmpfs does.
	s := &Session{b: b, setup: true, tmpSize: 2 << 30, limits: supclient.Defaults(l), spec: sandbox.Spec{
		Image: img, Labels: map[string]string{"fixpoint.setup": "true"}, Env: spec.Env, Path: spec.Path,
	}}
	if p := spec.Labels[sandbox.LabelProject]; p != "" {
		s.spec.Labels[sandbox.LabelProject] = p
	}
	for _, m := range mounts {
		s.caches = append(s.caches, podCache{Claim: m.Source, Target: m.Target})
		for _, w := range m.Writable {
			writable = append(writable, m.Target+"/"+w)
		}
	}
	if err := b.waitClaimsBound(ctx, mounts); err != nil {
		return err
	}
	if err := s.boot(ctx); err != nil {
		return fmt.Errorf("setup pod: %w%s", err, b.claimHint(ctx, mounts))
	}
	defer s.Close()
	if err := b.checkNetwork(ctx, s); err != nil {
		return err
	}
	egressAddr, egressDesc, stopEgress, err := startEgress(spec)
	if err != nil {
		return err
	}
	defer stopEgress()
	t, err := b.startTunnel(ctx, s.Name(), egressAddr)
	if err != nil {
		return err
	}
	defer t.Close()
	proxy := "http://" + t.podAddr
	env := []string{"TMPDIR=/tmp"}
	for _, kv := range spec.HostEnv {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY":
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy, "http_proxy="+proxy, "https_proxy="+proxy)
	if spec.CAFile != "" {
		ca, err := os.ReadFile(spec.CAFile)
		if err != nil {
			return fmt.Errorf("setup: read the CA bundle %s: %w", spec.CAFile, err)
		}
		var errOut bytes.Buffer
		if err := b.exec(ctx, s.Name(), []string{"/bin/sh", "-c", "cat > " + caPodPath}, bytes.NewReader(ca), &errOut, &errOut); err != nil {
			return fmt.Errorf("setup: copy the CA bundle into pod %s: %w: %s", s.Name(), err, strings.TrimSpace(errOut.String()))
		}
		env = append(env, "SSL_CERT_FILE="+caPodPath, "GIT_SSL_CAINFO="+caPodPath)
		for _, k := range spec.CAEnv {
			env = append(env, k+"="+caPodPath)
		}
	}
	if spec.Snapshot != nil {
		if _, err := s.Sync(ctx, spec.Snapshot); err != nil {
			return fmt.Errorf("setup: copy the workspace into pod %s: %w", s.Name(), err)
		}
	}
	script := spec.Script
	if spec.Snapshot != nil && spec.Snapshot.Git != nil {
		script = spec.Snapshot.Git.WrapScript(script)
	}
	tail := &sandbox.TailBuffer{Max: 8 << 10}
	out := &lockedWriter{w: tail}
	if spec.Output != nil {
		out.w = io.MultiWriter(tail, spec.Output)
	}
	cmd := sandbox.Command{Args: []string{"/bin/sh", "-c", script}, Env: env,
		Limits: sandbox.Limits{Timeout: timeout, OutputCap: 1 << 20}, FullStdout: out, FullStderr: out}
	b.log.Debug("setup pod runs the install step", "pod", s.Name(), "network", egressDesc)
	r, err := s.Run(ctx, cmd)
	if err != nil {
		return fmt.Errorf("setup pod %s: %w", s.Name(), err)
	}
	if r.TimedOut {
		return fmt.Errorf("%w: %q did not finish within %s (raise sandbox.timeout or set [sandbox] setup)", sandbox.ErrInstall, spec.Script, timeout)
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("%w: `%s` exited with code %d in image %s (setup pod on Kubernetes; its network reached only %s); last output:\n%s",
			sandbox.ErrInstall, spec.Script, r.ExitCode, spec.Image, egressDesc, tail.LastLines(20))
	}
	if len(writable) > 0 {
		// The writable layers' mount points: whatever the step left there
		// is replaced by an empty directory, so a test pod's emptyDir
		// lands inside the cache and nowhere else.
		fix := `for d do rm -rf -- "$d" && mkdir -- "$d" || exit 1; done`
		r, err := s.Run(ctx, sandbox.Command{Args: append([]string{"/bin/sh", "-c", fix, "fix"}, writable...), Limits: sandbox.Limits{Timeout: time.Minute}})
		if err != nil || r.ExitCode != 0 {
			return fmt.Errorf("setup pod %s: make the writable cache entries %v: %v %s", s.Name(), writable, err, resultText(r))
		}
	}
	return nil
}

func resultText(r *sandbox.Result) string {
	if r == nil {
		return ""
	}
	return strings.TrimSpace(string(r.Stdout) + string(r.Stderr))
}

// checkStorageClass fails early, with the fix, when the cache claims
// could never be bound: the configured StorageClass does not exist, or
// none is configured and the cluster has no default one. A user who may
// not read StorageClasses (cluster-scoped) is not checked.
func (b *Backend) checkStorageClass(ctx context.Context) error {
	classes := b.cs.StorageV1().StorageClasses()
	if name := b.opts.CacheStorageClass; name != "" {
		if _, err := classes.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return fmt.Errorf("%w: StorageClass %q (sandbox.kubernetes.cache_storage_class) does not exist on %s: name one that `kubectl get storageclass` lists, or set [sandbox] setup = \"off\" and use an image with the dependencies", ErrConfig, name, b.cfg.Host)
		}
		return nil
	}
	list, err := classes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	for _, c := range list.Items {
		if c.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			return nil
		}
	}
	return fmt.Errorf("%w: the dependency setup keeps its caches on PersistentVolumeClaims, and the cluster at %s has no default StorageClass: set sandbox.kubernetes.cache_storage_class to one that `kubectl get storageclass` lists, or set [sandbox] setup = \"off\" and use an image with the dependencies", ErrConfig, b.cfg.Host)
}

// waitClaimsBound waits until the new cache claims are bound before the
// setup pod that mounts them is created, when their StorageClass binds
// at once (volumeBindingMode Immediate, the API's default). A pod created
// before its immediate claims are bound is marked unschedulable, and a
// scheduler that misses the claims' later binding retries it only after
// its unschedulable-pod interval (five minutes by default): longer than
// the pod's start timeout. A class that binds for the first consumer
// (WaitForFirstConsumer) needs the pod first: nothing is waited for.
func (b *Backend) waitClaimsBound(ctx context.Context, mounts []sandbox.CacheMount) error {
	if !b.bindsImmediately(ctx) {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	pvcs := b.cs.CoreV1().PersistentVolumeClaims(b.ns)
	for _, m := range mounts {
		for {
			pvc, err := pvcs.Get(wctx, m.Source, metav1.GetOptions{})
			if err == nil && pvc.Status.Phase == corev1.ClaimBound {
				break
			}
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("dependency cache claim %s was deleted before its setup pod started (another fixpoint pruned it, or someone ran kubectl delete pvc); run again", m.Source)
			}
			select {
			case <-wctx.Done():
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("setup pod not started: its cache claims were not bound within %v%s", startTimeout, b.claimHint(ctx, mounts))
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	return nil
}

// bindsImmediately reports whether the cache claims' StorageClass binds
// them when they are created. A class that cannot be read (a user who may
// not read StorageClasses) counts as binding for its first consumer:
// the pod is then created at once, as before.
func (b *Backend) bindsImmediately(ctx context.Context) bool {
	classes := b.cs.StorageV1().StorageClasses()
	var class *storagev1.StorageClass
	if name := b.opts.CacheStorageClass; name != "" {
		c, err := classes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		class = c
	} else {
		list, err := classes.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range list.Items {
			if list.Items[i].Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
				class = &list.Items[i]
				break
			}
		}
	}
	return class != nil && (class.VolumeBindingMode == nil || *class.VolumeBindingMode == storagev1.VolumeBindingImmediate)
}

// claimHint explains a setup pod that never ran when a cache claim is not
// bound: no StorageClass provisions it.
func (b *Backend) claimHint(ctx context.Context, mounts []sandbox.CacheMount) string {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, m := range mounts {
		pvc, err := b.cs.CoreV1().PersistentVolumeClaims(b.ns).Get(hctx, m.Source, metav1.GetOptions{})
		if err != nil || pvc.Status.Phase == corev1.ClaimBound {
			continue
		}
		class := "the cluster's default StorageClass"
		if b.opts.CacheStorageClass != "" {
			class = "StorageClass " + b.opts.CacheStorageClass
		}
		return fmt.Sprintf(" (the dependency cache claim %s is %s: %s provides no volume for it; set sandbox.kubernetes.cache_storage_class to a StorageClass whose provisioner works, or set [sandbox] setup = \"off\" and use an image with the dependencies)", m.Source, pvc.Status.Phase, class)
	}
	return ""
}

// lockedWriter serialises the writes of a command's two streams.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

var _ sandbox.Installer = (*Backend)(nil)
