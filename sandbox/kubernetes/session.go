package kubernetes

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

// Session is one sandbox pod. It implements sandbox.Session: one goroutine
// at a time may call Sync, Run and ReadFile; Close may be called
// concurrently to abort. When the supervisor's stream breaks (the
// supervisor was killed, the pod evicted), the next call replaces the pod
// and re-syncs the last snapshot.
type Session struct {
	b      *Backend
	spec   sandbox.Spec
	limits sandbox.Limits
	// caches are the pod's dependency cache volumes; setup marks the
	// setup pod (install.go): its caches are writable, its volumes
	// belong to its uid's group, and its supervisor does not sweep (the
	// relay it runs besides must live).
	caches []podCache
	setup  bool
	// tmpSize, when set, replaces Options.TmpSize (the setup pod's
	// installers keep their own caches under HOME=/tmp).
	tmpSize int64

	// Set by boot (only from the calling goroutine); mu guards name, conn
	// and closed against Close.
	mu      sync.Mutex
	name    string
	conn    *supclient.Conn
	closed  bool
	baseEnv []string
	nodeIP  string // the node's address as pods see it (status.hostIP)

	last   *sandbox.Snapshot
	hashes supclient.Hashes

	closeOnce sync.Once
	closeErr  error
}

// startTimeout bounds a pod's way to Running (image present or pulled).
const startTimeout = 3 * time.Minute

// Start creates a hardened pod for spec, starts the supervisor in it and
// waits for its Ready frame. A missing image (ErrImageNeverPull, a failed
// pull) wraps sandbox.ErrImageMissing.
func (b *Backend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	if spec.Image == "" {
		return nil, fmt.Errorf("kubernetes sandbox: no image given: %w", sandbox.ErrImageMissing)
	}
	img, err := b.imageRef(spec.Image)
	if err != nil {
		return nil, err
	}
	spec.Image = img
	s := &Session{b: b, spec: spec, limits: supclient.Defaults(spec.Limits)}
	s.spec.Env = slices.Clone(spec.Env)
	for _, c := range spec.Caches {
		if c.HostDir != "" || c.Source == "" {
			// A host directory (the developer's Go module cache) is not
			// on the cluster's nodes: the setup step fills a volume
			// instead (install.go).
			b.log.Debug("kubernetes sandbox: host cache not mounted", "cache", c.Name, "target", c.Target)
			continue
		}
		s.caches = append(s.caches, podCache{Claim: c.Source, Target: c.Target, ReadOnly: true, Writable: c.Writable})
		if c.DirEnv != "" {
			s.spec.Env = append(s.spec.Env, c.DirEnv+"="+c.Target)
		}
		s.spec.Env = append(s.spec.Env, c.Env...)
	}
	if err := s.boot(ctx); err != nil {
		return nil, err
	}
	if err := b.checkNetwork(ctx, s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Name is the session's pod name.
func (s *Session) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// boot creates a pod, waits for it, copies the supervisor in and opens the
// session's one exec stream to it.
func (s *Session) boot(ctx context.Context) error {
	b := s.b
	name, uid := newSessionName()
	labels := ownerLabels(name, time.Now())
	for k, v := range s.spec.Labels {
		if _, own := labels[k]; !own {
			if v = labelValue(v); v != "" && len(k) <= 63 {
				labels[k] = v
			}
		}
	}
	fsGroup := int64(0)
	if s.setup {
		fsGroup = uid
	}
	pod := hardenedPod(podParams{
		Name: name, Namespace: b.ns, Image: s.spec.Image, PullPolicy: b.opts.PullPolicy, UID: uid,
		Labels: labels, Limits: s.limits, CPURequest: b.cpuReq, MemoryRequest: b.memReq,
		RuntimeClass: b.opts.RuntimeClass, WorkspaceSize: b.opts.WorkspaceSize, TmpSize: cmp.Or(s.tmpSize, b.opts.TmpSize),
		Caches: s.caches, FSGroup: fsGroup,
	})
	created, err := b.cs.CoreV1().Pods(b.ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create sandbox pod in namespace %s: %w", b.ns, err)
	}
	s.mu.Lock()
	s.name = name
	closed := s.closed
	s.mu.Unlock()
	fail := func(err error) error {
		if derr := deletePod(context.WithoutCancel(ctx), b.cs, b.ns, name); derr != nil {
			b.log.Warn("delete sandbox pod", "pod", name, "err", derr)
		}
		return err
	}
	if closed {
		return fail(sandbox.ErrClosed)
	}
	running, err := b.waitRunning(ctx, created)
	if err != nil {
		return fail(err)
	}
	arch, err := b.nodeArch(ctx, running)
	if err != nil {
		return fail(err)
	}
	bin, ok := docker.SupervisorBinary(arch)
	if !ok {
		return fail(fmt.Errorf("node %s has architecture %q, for which fixpoint has no supervisor build: %w", running.Spec.NodeName, arch, sandbox.ErrUnavailable))
	}
	// One exec copies the supervisor in and prints the container's
	// environment (the image's ENV, which the API does not show).
	var out, errOut bytes.Buffer
	// An image's GOCACHE that the read-only root makes unwritable (the
	// go image's prebuilt cache) is marked, and commands get a cold cache
	// in /tmp instead: the cluster has no volume of the docker backend's
	// per-project build cache (README: not done).
	copyCmd := []string{"/bin/sh", "-c", "cat > " + supervisorPath + " && chmod 0555 " + supervisorPath + " && cat /proc/self/environ && " +
		`{ [ -z "$GOCACHE" ] || [ -w "$GOCACHE" ] || printf '` + roGoCache + `=1\0'; }`}
	if err := b.exec(ctx, name, copyCmd, bytes.NewReader(bin), &out, &errOut); err != nil {
		return fail(fmt.Errorf("copy the supervisor into pod %s (the image needs sh and cat): %w: %s", name, err, strings.TrimSpace(errOut.String())))
	}
	s.baseEnv = supclient.SpecEnv(baseEnv(out.Bytes()), s.spec)
	s.nodeIP = running.Status.HostIP
	conn, err := b.openSupervisor(ctx, name, !s.setup)
	if err != nil {
		return fail(err)
	}
	s.mu.Lock()
	closed = s.closed
	s.conn = conn
	s.mu.Unlock()
	if closed {
		conn.Close()
		return fail(sandbox.ErrClosed)
	}
	b.log.Debug("sandbox pod started", "pod", name, "node", running.Spec.NodeName, "image", s.spec.Image)
	return nil
}

// openSupervisor starts the supervisor with one exec whose stdin/stdout
// carry the framed protocol for the rest of the session; its stderr goes
// to the debug log. Closing the Conn ends the exec, and the supervisor
// kills its command and exits when its stdin closes.
func (b *Backend) openSupervisor(ctx context.Context, pod string, sweep bool) (*supclient.Conn, error) {
	args := []string{supervisorPath, "-sweep", "-workspace", workspaceDir}
	if !sweep {
		args = slices.Delete(args, 1, 2)
	}
	ex, err := b.executor(pod, args, true)
	if err != nil {
		return nil, err
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ended := make(chan struct{})
	go func() { // ends when the exec does: closed stdin, cancel, or a dead pod
		defer close(ended)
		err := ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: inR, Stdout: outW, Stderr: logWriter{b, pod}})
		if err == nil {
			err = io.EOF
		}
		outW.CloseWithError(err)
		inR.CloseWithError(err)
	}()
	conn := supclient.New(outR, inW, func() {
		// Closing stdin makes the supervisor exit and the exec end
		// cleanly; the cancel is for a stream that does not. Our end of
		// its stdout closes after, or client-go logs the broken copy on
		// the terminal.
		inW.Close()
		select {
		case <-ended:
		case <-time.After(2 * time.Second):
		}
		outR.Close()
		cancel()
	})
	conn.KeepRootTime = true // /workspace is the emptyDir's root, owned by root
	if err := conn.AwaitReady(ctx, 30*time.Second); err != nil {
		conn.Close()
		return nil, fmt.Errorf("sandbox pod %s: %w", pod, err)
	}
	return conn, nil
}

// logWriter sends the supervisor's own stderr to the debug log.
type logWriter struct {
	b   *Backend
	pod string
}

func (w logWriter) Write(p []byte) (int, error) {
	w.b.log.Debug("supervisor", "pod", w.pod, "stderr", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// executor returns an exec of cmd in pod's sandbox container: WebSocket,
// falling back to SPDY for API servers that cannot upgrade.
func (b *Backend) executor(pod string, cmd []string, stdin bool) (remotecommand.Executor, error) {
	req := b.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(b.ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: containerName, Command: cmd, Stdin: stdin, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(b.cfg, "GET", req.URL().String())
	if err != nil {
		return nil, fmt.Errorf("exec in pod %s: %w", pod, err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(b.cfg, "POST", req.URL())
	if err != nil {
		return nil, fmt.Errorf("exec in pod %s: %w", pod, err)
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return nil, fmt.Errorf("exec in pod %s: %w", pod, err)
	}
	return ex, nil
}

// exec runs cmd in pod to completion; a non-zero exit is an error.
func (b *Backend) exec(ctx context.Context, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) error {
	ex, err := b.executor(pod, cmd, stdin != nil)
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// waitRunning watches pod until it runs. Image errors wrap
// sandbox.ErrImageMissing; a pod that ends, or is not running within
// startTimeout, is an error that says why.
func (b *Backend) waitRunning(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	last := pod
	for {
		if done, err := podStarted(last); done || err != nil {
			return last, err
		}
		w, err := b.cs.CoreV1().Pods(b.ns).Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", pod.Name).String(),
			ResourceVersion: last.ResourceVersion,
		})
		if err != nil {
			return nil, b.startErr(ctx, pod.Name, last, fmt.Errorf("watch sandbox pod %s: %w", pod.Name, err))
		}
		last, err = b.watchUntilStarted(ctx, w.ResultChan(), last)
		w.Stop()
		if err != nil || ctx.Err() != nil {
			return nil, b.startErr(ctx, pod.Name, last, err)
		}
		if done, err := podStarted(last); done || err != nil {
			return last, err
		}
		// The watch ended (the API server closes watches now and then):
		// read the pod again and watch from there.
		p, err := b.cs.CoreV1().Pods(b.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return nil, b.startErr(ctx, pod.Name, last, fmt.Errorf("read sandbox pod %s: %w", pod.Name, err))
		}
		last = p
	}
}

// watchUntilStarted follows events until the pod runs or fails, the watch
// ends, or ctx is done; it returns the last pod seen.
func (b *Backend) watchUntilStarted(ctx context.Context, events <-chan watch.Event, last *corev1.Pod) (*corev1.Pod, error) {
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return last, nil
			}
			if p, ok := ev.Object.(*corev1.Pod); ok {
				last = p
				if done, err := podStarted(last); done || err != nil {
					return last, err
				}
			}
		case <-ctx.Done():
			return last, nil
		}
	}
}

func (b *Backend) startErr(ctx context.Context, name string, last *corev1.Pod, err error) error {
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("sandbox pod %s not running after %v: %s", name, startTimeout, podStatus(last))
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return err
}

// podStarted reports whether p runs, or why it never will.
func podStarted(p *corev1.Pod) (bool, error) {
	switch p.Status.Phase {
	case corev1.PodRunning:
		return true, nil
	case corev1.PodFailed, corev1.PodSucceeded:
		return true, fmt.Errorf("sandbox pod %s ended before it ran: %s", p.Name, podStatus(p))
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName":
				return true, fmt.Errorf("image %s on node %s: %s: %s: %w", cs.Image, p.Spec.NodeName, w.Reason, w.Message, sandbox.ErrImageMissing)
			case "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				return true, fmt.Errorf("sandbox pod %s: %s: %s", p.Name, w.Reason, w.Message)
			}
		}
	}
	return false, nil
}

// podStatus summarises why a pod is not running, for messages.
func podStatus(p *corev1.Pod) string {
	parts := []string{"phase " + string(p.Status.Phase)}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			parts = append(parts, w.Reason+": "+w.Message)
		}
		if t := cs.State.Terminated; t != nil {
			parts = append(parts, fmt.Sprintf("terminated %s (exit %d): %s", t.Reason, t.ExitCode, t.Message))
		}
	}
	return strings.Join(parts, "; ")
}

// nodeArch is the GOARCH of the node pod runs on: the node's status,
// else (the API refuses nodes to this user) `uname -m` in the pod.
func (b *Backend) nodeArch(ctx context.Context, pod *corev1.Pod) (string, error) {
	node := pod.Spec.NodeName
	b.archMu.Lock()
	arch, ok := b.arches[node]
	b.archMu.Unlock()
	if ok {
		return arch, nil
	}
	if n, err := b.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
		arch = n.Status.NodeInfo.Architecture
	} else {
		var out bytes.Buffer
		if err := b.exec(ctx, pod.Name, []string{"uname", "-m"}, nil, &out, io.Discard); err != nil {
			return "", fmt.Errorf("architecture of node %s: %w", node, err)
		}
		arch = strings.TrimSpace(out.String())
	}
	b.archMu.Lock()
	b.arches[node] = arch
	b.archMu.Unlock()
	return arch, nil
}

// baseEnv turns the container's environment (NUL-separated, as in
// /proc/self/environ) into the one commands see: the image's ENV with
// PATH kept, HOME, LANG and TMPDIR pointing at writable places, and
// nothing Kubernetes injects (KUBERNETES_*, HOSTNAME).
func baseEnv(environ []byte) []string {
	env := map[string]string{"PATH": defaultPath}
	var order []string
	roCache := false
	for _, kv := range bytes.Split(environ, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok || k == "" {
			continue
		}
		if k == roGoCache {
			roCache = true
			continue
		}
		if _, seen := env[k]; !seen {
			order = append(order, k)
		}
		env[k] = v
	}
	out := []string{"PATH=" + env["PATH"], "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp"}
	for _, k := range order {
		switch {
		case k == "PATH", k == "HOME", k == "LANG", k == "TMPDIR", k == "HOSTNAME",
			strings.HasPrefix(k, "KUBERNETES_"):
		default:
			out = append(out, k+"="+env[k])
		}
	}
	if roCache {
		for i, kv := range out {
			if strings.HasPrefix(kv, "GOCACHE=") {
				out[i] = "GOCACHE=/tmp/.gocache"
			}
		}
	}
	return out
}

// roGoCache marks, in the copy step's output, an image GOCACHE that
// commands cannot write.
const roGoCache = "FIXPOINT_GOCACHE_READONLY"

// ready returns the live stream, replacing a dead pod first.
func (s *Session) ready(ctx context.Context) (*supclient.Conn, error) {
	s.mu.Lock()
	closed, c := s.closed, s.conn
	s.mu.Unlock()
	if closed {
		return nil, sandbox.ErrClosed
	}
	if c != nil && !c.Dead() {
		return c, nil
	}
	s.b.log.Info("sandbox pod died; replacing it", "pod", s.Name())
	s.removePod(ctx)
	if err := s.boot(ctx); err != nil {
		return nil, fmt.Errorf("replace sandbox pod: %w", err)
	}
	if s.last != nil {
		last := s.last
		s.last, s.hashes = nil, supclient.Hashes{}
		if _, err := s.conn.Sync(ctx, last, &s.hashes); err != nil {
			return nil, fmt.Errorf("replace sandbox pod: %w", err)
		}
		s.last = last
	}
	return s.conn, nil
}

// Sync makes /workspace equal to snap, sending only what changed.
func (s *Session) Sync(ctx context.Context, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return sandbox.SyncStats{}, err
	}
	st, err := c.Sync(ctx, snap, &s.hashes)
	if err != nil {
		return st, s.wrap(err)
	}
	s.last = snap
	return st, nil
}

// Run runs cmd through the supervisor. A command that made the sandbox's
// memory cgroup kill the supervisor too ends with 137 and OOMKilled; the
// next call starts a new pod.
func (s *Session) Run(ctx context.Context, cmd sandbox.Command) (*sandbox.Result, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := c.Run(ctx, cmd, s.baseEnv, supclient.Merge(cmd.Limits, s.limits))
	if err != nil && errors.Is(err, supclient.ErrStream) && ctx.Err() == nil {
		if r := s.died(ctx, start); r != nil {
			return r, nil
		}
	}
	if err != nil {
		return nil, s.wrap(err)
	}
	return res, nil
}

// died reports a command that took the sandbox down with it by memory: the
// container was OOM-killed (137). Otherwise nil.
func (s *Session) died(ctx context.Context, start time.Time) *sandbox.Result {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	p, err := s.b.cs.CoreV1().Pods(s.b.ns).Get(ictx, s.Name(), metav1.GetOptions{})
	if err != nil {
		return nil
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.Reason == "OOMKilled" {
			return &sandbox.Result{ExitCode: 137, OOMKilled: true, Duration: time.Since(start)}
		}
	}
	return nil
}

// wrap turns errors of a closed session into sandbox.ErrClosed and names
// the pod.
func (s *Session) wrap(err error) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return sandbox.ErrClosed
	}
	return fmt.Errorf("sandbox pod %s: %w", s.Name(), err)
}

// ReadFile reads a workspace file (at most 8 MiB). A missing file's error
// wraps fs.ErrNotExist.
func (s *Session) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	data, err := c.ReadFile(ctx, rel)
	if err != nil {
		return nil, s.wrap(err)
	}
	return data, nil
}

// Changes lists how the workspace differs from the last Sync.
func (s *Session) Changes(ctx context.Context, skip ...string) (*supclient.Changes, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := c.Changes(ctx, skip...)
	if err != nil {
		return nil, s.wrap(err)
	}
	return ch, nil
}

// Close deletes the pod. It may be called concurrently with a running
// command, which then returns sandbox.ErrClosed.
func (s *Session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s.closeErr = s.removePod(ctx)
	})
	return s.closeErr
}

func (s *Session) removePod(ctx context.Context) error {
	s.mu.Lock()
	c, name := s.conn, s.name
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
	if name == "" {
		return nil
	}
	if err := deletePod(ctx, s.b.cs, s.b.ns, name); err != nil {
		return fmt.Errorf("remove sandbox: %w (Reap deletes it once this process is gone)", err)
	}
	s.b.log.Debug("sandbox pod deleted", "pod", name)
	return nil
}

var _ sandbox.Session = (*Session)(nil)
var _ sandbox.Backend = (*Backend)(nil)
