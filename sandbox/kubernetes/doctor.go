package kubernetes

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Diagnosis is what [Diagnose] found about the configured cluster.
type Diagnosis struct {
	Source       string // where the kubeconfig came from
	Server       string // the API server's address
	Version      string // its version
	Namespace    string
	RuntimeClass string // as configured ("" = default)
	Nodes        int    // -1 when listing nodes is forbidden
	ReadyNodes   int
	// Policy says whether the deny-all NetworkPolicy exists ("present",
	// "absent: created by the first session", or why it is unknown).
	Policy string
	// CacheStorage says where the setup phase's cache claims would go:
	// "StorageClass X", "default StorageClass X", or what is missing
	// (CacheOK false).
	CacheStorage string
	CacheOK      bool
	// Images says where sandbox pods get their images: the nodes' own
	// (no image_registry), or the registry and the languages pushed there
	// (pinned by sandbox.kubernetes.image_tags).
	Images   string
	ImagesOK bool // false: a registry is named but nothing was pushed
}

// Diagnose reads the cluster the options name without creating anything:
// that the API server answers, the namespace and runtime class exist, how
// many nodes are Ready. The error names the kubeconfig and the fix.
func Diagnose(ctx context.Context, opts Options) (*Diagnosis, error) {
	cfg, ns, source, err := LoadConfig(opts)
	if err != nil {
		return nil, err
	}
	d := &Diagnosis{Source: source, Server: cfg.Host, Namespace: ns, RuntimeClass: opts.RuntimeClass, Nodes: -1}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return d, fmt.Errorf("kubeconfig %s: %w", source, err)
	}
	ver, err := cs.Discovery().ServerVersion()
	if err != nil {
		return d, fmt.Errorf("API server %s (kubeconfig %s) does not answer: %w", cfg.Host, source, err)
	}
	d.Version = ver.GitVersion
	if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return d, fmt.Errorf("namespace %q does not exist: `kubectl create namespace %s` or set sandbox.kubernetes.namespace", ns, ns)
	}
	if rc := opts.RuntimeClass; rc != "" {
		if _, err := cs.NodeV1().RuntimeClasses().Get(ctx, rc, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return d, fmt.Errorf("RuntimeClass %q does not exist: create it or unset sandbox.kubernetes.runtime_class", rc)
		}
	}
	if nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		d.Nodes = len(nodes.Items)
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					d.ReadyNodes++
				}
			}
		}
	}
	switch _, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, policyName, metav1.GetOptions{}); {
	case err == nil:
		d.Policy = "present"
	case apierrors.IsNotFound(err):
		d.Policy = "absent (the first session creates it)"
	default:
		d.Policy = "unknown: " + err.Error()
	}
	d.CacheStorage, d.CacheOK = cacheStorage(ctx, cs, opts.CacheStorageClass)
	d.Images, d.ImagesOK = imageSource(opts)
	return d, nil
}

// imageSource describes where the pods' images come from.
func imageSource(opts Options) (string, bool) {
	if opts.ImageRegistry == "" {
		return "the nodes' own (no sandbox.kubernetes.image_registry; pull policy " + cmp.Or(opts.PullPolicy, "IfNotPresent") + ")", true
	}
	langs := slices.Sorted(maps.Keys(opts.ImageTags))
	if len(langs) == 0 {
		return opts.ImageRegistry + ", but no language was pushed there (sandbox.kubernetes.image_tags is empty)", false
	}
	return opts.ImageRegistry + " (pushed, pinned by digest: " + strings.Join(langs, ", ") + ")", true
}

// cacheStorage describes the StorageClass the cache claims would use.
func cacheStorage(ctx context.Context, cs kubernetes.Interface, class string) (string, bool) {
	if class != "" {
		switch _, err := cs.StorageV1().StorageClasses().Get(ctx, class, metav1.GetOptions{}); {
		case err == nil:
			return "StorageClass " + class, true
		case apierrors.IsNotFound(err):
			return "StorageClass " + class + " (sandbox.kubernetes.cache_storage_class) does not exist", false
		default:
			return "StorageClass " + class + " (not readable: " + err.Error() + ")", true
		}
	}
	list, err := cs.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "the default StorageClass (not readable: " + err.Error() + ")", true
	}
	for _, c := range list.Items {
		if c.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			return "default StorageClass " + c.Name, true
		}
	}
	return "no default StorageClass and no sandbox.kubernetes.cache_storage_class", false
}
