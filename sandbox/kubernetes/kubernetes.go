// Package kubernetes is the sandbox backend that runs sessions as pods on
// a Kubernetes cluster the user points fixpoint at (sandbox.backend =
// "kubernetes"), so that the cluster, not fixpoint, places them.
//
// The main types are [Backend] (created by [New]) and [Session]. A session
// is one hardened pod ([hardenedPod], golden in testdata/pod.golden) whose
// container idles; the backend copies fixpoint's sandbox supervisor (the
// one the docker backend embeds) into an in-memory emptyDir with one exec,
// then starts it with a second exec and keeps that exec's stream for the
// whole session: every Run, Sync and ReadFile is a frame on it
// (sandbox/docker/supclient), not a new exec through the API server.
//
// Every pod carries fixpoint.managed=true, fixpoint.session,
// fixpoint.pid, fixpoint.pidstart, fixpoint.host and fixpoint.created;
// Close deletes the pod, and [Reap] (called by New) deletes the pods whose
// owner process on this host is gone. New also keeps a deny-all
// NetworkPolicy for those pods in the namespace, and the first session
// checks that a pod really cannot reach its node (netcheck.go): a cluster
// whose network plugin ignores NetworkPolicy fails closed.
//
// The setup phase (install.go, [Backend.Install]) runs a project's
// dependency install in a setup pod hardened as a session's, whose only
// network is the supervisor's relay mode over a second exec stream
// (tunnel.go) to an allowlisting egress or the user's proxy on this
// machine (egress.go); it fills PersistentVolumeClaims keyed like the
// docker backend's volumes, which sessions mount read-only.
//
// Configuration comes from the user only (config.Sandbox.Kubernetes,
// user-only keys): kubeconfig, context, namespace, runtime class, pull
// policy, requests, cache storage class and size.
package kubernetes

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Label keys set on every pod.
const (
	LabelManaged  = "fixpoint.managed" // "true": the NetworkPolicy and Reap select on it
	LabelSession  = "fixpoint.session"
	LabelPID      = "fixpoint.pid"
	LabelPIDStart = "fixpoint.pidstart"
	LabelHost     = "fixpoint.host"
	LabelCreated  = "fixpoint.created" // unix seconds
)

// Network check modes (Options.NetworkCheck).
const (
	NetworkCheckEnforce = "enforce" // default: a pod that reaches its node fails Start
	NetworkCheckWarn    = "warn"    // log a warning and go on
)

// Options configure a Backend. The zero value is usable.
type Options struct {
	// Kubeconfig is a kubeconfig file; "" = client-go's standard rules:
	// $KUBECONFIG (a list), else ~/.kube/config, else the in-cluster
	// service account.
	Kubeconfig string
	// Context is the kubeconfig context; "" = its current context.
	Context string
	// Namespace is where pods go; "" = the context's namespace, else
	// "default".
	Namespace string
	// RuntimeClass is a RuntimeClass name (gVisor: "gvisor"); "" = the
	// cluster's default runtime.
	RuntimeClass string
	// PullPolicy is Never, IfNotPresent or Always; "" = IfNotPresent.
	// Never suits images preloaded on the nodes.
	PullPolicy string
	// CPURequest and MemoryRequest are the scheduler's reservation per
	// session (Kubernetes quantities, "250m", "256Mi"); "" = 100m, 128Mi.
	// Limits come from sandbox.Limits (Memory, NanoCPUs).
	CPURequest, MemoryRequest string
	// WorkspaceSize and TmpSize cap /workspace and /tmp; 0 = 1 GiB and
	// 256 MiB.
	WorkspaceSize, TmpSize int64
	// CacheStorageClass is the StorageClass of the dependency cache
	// claims the setup step fills (install.go); "" = the cluster's
	// default StorageClass.
	CacheStorageClass string
	// CacheSize is each cache claim's requested size (a Kubernetes
	// quantity); "" = 4Gi.
	CacheSize string
	// NetworkCheck is NetworkCheckEnforce ("" too) or NetworkCheckWarn.
	NetworkCheck string
	// ImageRegistry, when set, is where fixpoint's images were pushed
	// (`fixpoint sandbox images push`): a session whose image is
	// fixpoint-sandbox-LANG then uses REGISTRY/fixpoint-sandbox-LANG:
	// ImageTags[LANG] ("TAG@sha256:…"); "" = image names as they are.
	ImageRegistry string
	ImageTags     map[string]string
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// NoReap skips the Reap call in New.
	NoReap bool
	// Warn receives the network check's warning in warn mode; nil = the
	// logger only.
	Warn func(msg string)
}

// Backend starts Kubernetes sandbox sessions. It is safe for concurrent
// use.
type Backend struct {
	cfg        *rest.Config
	cs         kubernetes.Interface
	ns         string
	source     string // where the configuration came from, for messages
	opts       Options
	log        *slog.Logger
	cpuReq     resource.Quantity
	memReq     resource.Quantity
	cacheSize  resource.Quantity
	server     string // the API server's version
	netMu      sync.Mutex
	netChecked bool // guarded by netMu: the network check passed once

	archMu sync.Mutex
	arches map[string]string // node name -> GOARCH; guarded by archMu

	reaped chan struct{}
	stop   context.CancelFunc
}

// contactTimeout bounds the first contact with the API server.
const contactTimeout = 15 * time.Second

// ErrConfig wraps configuration errors: no kubeconfig, a bad context, a
// bad quantity.
var ErrConfig = errors.New("kubernetes sandbox configuration")

// LoadConfig resolves the client configuration the way kubectl does and
// returns it with the namespace and a description of where it came from
// (a path, "$KUBECONFIG=…" or "in-cluster").
func LoadConfig(opts Options) (*rest.Config, string, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	source := ""
	switch {
	case opts.Kubeconfig != "":
		rules.ExplicitPath = opts.Kubeconfig
		source = opts.Kubeconfig
	case os.Getenv("KUBECONFIG") != "":
		source = "$KUBECONFIG=" + os.Getenv("KUBECONFIG")
	default:
		source = clientcmd.RecommendedHomeFile
		if _, err := os.Stat(source); err != nil && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
			source = "in-cluster service account"
		}
	}
	if missing := missingKubeconfigs(rules, opts.Kubeconfig); missing != "" {
		return nil, "", source, fmt.Errorf("%w: %s; set sandbox.kubernetes.kubeconfig (or KUBECONFIG) to the kubeconfig of your cluster", ErrConfig, missing)
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", source, fmt.Errorf("%w: load %s: %w; set sandbox.kubernetes.kubeconfig (or KUBECONFIG) to a kubeconfig that reaches your cluster", ErrConfig, source, err)
	}
	ns := opts.Namespace
	if ns == "" {
		ns, _, err = cc.Namespace()
		if err != nil || ns == "" {
			ns = "default"
		}
	}
	return cfg, ns, source, nil
}

// missingKubeconfigs says which kubeconfig is missing when none of the
// files the rules would read exists (and no in-cluster account is there
// to fall back on), or "".
func missingKubeconfigs(rules *clientcmd.ClientConfigLoadingRules, explicit string) string {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "kubeconfig " + explicit + " (sandbox.kubernetes.kubeconfig) cannot be read: " + err.Error()
		}
		return ""
	}
	for _, p := range rules.Precedence {
		if _, err := os.Stat(p); err == nil {
			return ""
		}
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return "" // in-cluster
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return "no file of KUBECONFIG=" + env + " exists"
	}
	return "no kubeconfig: " + clientcmd.RecommendedHomeFile + " does not exist, KUBECONFIG is unset and this is not a pod"
}

// New loads the client configuration, checks that the API server answers,
// that the namespace and runtime class exist, keeps the deny-all
// NetworkPolicy in the namespace, and reaps pods of dead fixpoint
// processes in the background. When the cluster does not answer, the
// error wraps sandbox.ErrUnavailable and names the kubeconfig.
func New(ctx context.Context, opts *Options) (*Backend, error) {
	b := &Backend{arches: map[string]string{}}
	if opts != nil {
		b.opts = *opts
	}
	b.log = b.opts.Logger
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	switch b.opts.PullPolicy {
	case "":
		b.opts.PullPolicy = "IfNotPresent"
	case "Never", "IfNotPresent", "Always":
	default:
		return nil, fmt.Errorf("%w: sandbox.kubernetes.image_pull_policy %q: want Never, IfNotPresent or Always", ErrConfig, b.opts.PullPolicy)
	}
	switch b.opts.NetworkCheck {
	case "", NetworkCheckEnforce, NetworkCheckWarn:
	default:
		return nil, fmt.Errorf("%w: sandbox.kubernetes.network_check %q: want enforce or warn", ErrConfig, b.opts.NetworkCheck)
	}
	for _, q := range []struct {
		key, val string
		dst      *resource.Quantity
	}{{"cpu_request", b.opts.CPURequest, &b.cpuReq}, {"memory_request", b.opts.MemoryRequest, &b.memReq}, {"cache_size", cmp.Or(b.opts.CacheSize, defaultCacheSize), &b.cacheSize}} {
		if q.val == "" {
			continue
		}
		v, err := resource.ParseQuantity(q.val)
		if err != nil {
			return nil, fmt.Errorf("%w: sandbox.kubernetes.%s %q: %w", ErrConfig, q.key, q.val, err)
		}
		*q.dst = v
	}
	if err := b.checkImages(); err != nil {
		return nil, err
	}
	cfg, ns, source, err := LoadConfig(b.opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", sandbox.ErrUnavailable, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	b.cfg, b.ns, b.source = cfg, ns, source
	b.cs, err = kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client (%s): %w: %w", source, sandbox.ErrUnavailable, err)
	}
	pctx, cancel := context.WithTimeout(ctx, contactTimeout)
	defer cancel()
	if err := b.check(pctx); err != nil {
		return nil, err
	}
	b.reaped = make(chan struct{})
	rctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	b.stop = stop
	go func() {
		defer close(b.reaped)
		defer stop()
		if b.opts.NoReap {
			return
		}
		if n, err := Reap(rctx, b.cs, b.ns); err != nil {
			b.log.Warn("reap leftover sandbox pods", "err", err)
		} else if n > 0 {
			b.log.Info("reaped leftover sandbox pods", "removed", n)
		}
	}()
	return b, nil
}

// check contacts the API server and prepares the namespace.
func (b *Backend) check(ctx context.Context) error {
	ver, err := b.cs.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("kubernetes API server %s (from %s) does not answer: %w: %w; check the cluster is up and `kubectl --kubeconfig ... version` works", b.cfg.Host, b.source, sandbox.ErrUnavailable, err)
	}
	b.server = ver.GitVersion
	if _, err := b.cs.CoreV1().Namespaces().Get(ctx, b.ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: namespace %q does not exist on %s (from %s): create it (`kubectl create namespace %s`) or set sandbox.kubernetes.namespace", ErrConfig, b.ns, b.cfg.Host, b.source, b.ns)
	}
	if rc := b.opts.RuntimeClass; rc != "" {
		if _, err := b.cs.NodeV1().RuntimeClasses().Get(ctx, rc, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return fmt.Errorf("%w: RuntimeClass %q does not exist on %s: create it or unset sandbox.kubernetes.runtime_class", ErrConfig, rc, b.cfg.Host)
		}
	}
	pol := denyAllPolicy(b.ns)
	_, err = b.cs.NetworkingV1().NetworkPolicies(b.ns).Create(ctx, pol, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create NetworkPolicy %s in namespace %s: %w; fixpoint needs to create networkpolicies there (RBAC), or an administrator creates it: it denies all traffic of pods labelled %s=true", policyName, b.ns, err, LabelManaged)
	}
	return nil
}

// Name returns "kubernetes".
func (b *Backend) Name() string { return "kubernetes" }

// Namespace is where the backend's pods go.
func (b *Backend) Namespace() string { return b.ns }

// Source says where the client configuration came from.
func (b *Backend) Source() string { return b.source }

// ServerVersion is the API server's version.
func (b *Backend) ServerVersion() string { return b.server }

// Clientset is the API client (tests, doctor).
func (b *Backend) Clientset() kubernetes.Interface { return b.cs }

// Reaped is closed when the start-up reap has ended.
func (b *Backend) Reaped() <-chan struct{} { return b.reaped }

// Close stops the start-up reap. Sessions must be closed first.
func (b *Backend) Close() error {
	if b.stop != nil {
		b.stop()
		<-b.reaped
	}
	return nil
}

// ownerLabels identifies this process on the pods it creates.
func ownerLabels(session string, now time.Time) map[string]string {
	pid := os.Getpid()
	return map[string]string{
		LabelManaged:  "true",
		LabelSession:  session,
		LabelPID:      strconv.Itoa(pid),
		LabelPIDStart: sandbox.ProcessStart(pid),
		LabelHost:     labelValue(hostname()),
		LabelCreated:  strconv.FormatInt(now.Unix(), 10),
	}
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

var badLabelChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// labelValue makes s a valid label value: at most 63 characters of
// [A-Za-z0-9._-], starting and ending with an alphanumeric.
func labelValue(s string) string {
	s = badLabelChars.ReplaceAllString(s, "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "._-")
}

// ownerGone reports whether the labelled owner process is certainly dead.
// Pods of another host are never judged gone: their owner may live.
func ownerGone(labels map[string]string) bool {
	if labels[LabelHost] != labelValue(hostname()) {
		return false
	}
	return sandbox.OwnerGone(labels[LabelPID], labels[LabelPIDStart])
}

// Reap deletes the pods in namespace labelled fixpoint.managed whose owner
// process on this host is gone, and returns how many it deleted.
func Reap(ctx context.Context, cs kubernetes.Interface, namespace string) (int, error) {
	list, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelManaged + "=true," + LabelHost + "=" + labelValue(hostname())})
	if err != nil {
		return 0, fmt.Errorf("list sandbox pods in %s: %w", namespace, err)
	}
	var errs []error
	n := 0
	for _, p := range list.Items {
		if !ownerGone(p.Labels) {
			continue
		}
		if err := deletePod(ctx, cs, namespace, p.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func deletePod(ctx context.Context, cs kubernetes.Interface, namespace, name string) error {
	zero := int64(0)
	err := cs.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

func newSessionName() (string, int64) {
	var b [10]byte
	rand.Read(b[:])
	return "fixpoint-" + hex.EncodeToString(b[:6]), uidFor(binary.BigEndian.Uint32(b[6:]))
}
