package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// runningPods watches this process's sandbox pods (fixpoint.managed,
// fixpoint.pid) through the API server and keeps the largest number that
// were Running, and not being deleted, at one time. reached is closed when
// that number first reaches want.
type runningPods struct {
	want    int
	reached chan struct{}

	mu      sync.Mutex      // guards the fields below
	running map[string]bool // pod name -> Running and not deleting
	max     int
	nodes   map[string]bool // nodes the scheduler placed them on
}

// watchRunningPods starts the watch; it ends with the test.
func watchRunningPods(t *testing.T, kubeconfig string, want int) *runningPods {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sel := "fixpoint.managed=true,fixpoint.pid=" + strconv.Itoa(os.Getpid())
	ctx, cancel := context.WithCancel(context.Background())
	// List, then watch from the list's version: a watch from "now" waits
	// for the API server's cache to catch up with etcd, which etcd 3.4
	// (the CI cluster's) only lets it do when pods change.
	list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		cancel()
		t.Fatalf("list pods %s: %v", sel, err)
	}
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: list.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatalf("watch pods %s: %v", sel, err)
	}
	p := &runningPods{want: want, reached: make(chan struct{}), running: map[string]bool{}, nodes: map[string]bool{}}
	for i := range list.Items {
		p.observe(&list.Items[i], false)
	}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	go func() { // exits when the watch is stopped at cleanup
		defer close(done)
		for ev := range w.ResultChan() {
			if st, ok := ev.Object.(*metav1.Status); ok {
				// Stopping the watch at cleanup closes its stream, which
				// client-go reports as one last error event: only an error
				// while the test still watches counts.
				if ctx.Err() == nil {
					t.Errorf("watch pods %s: %s", sel, st.Message)
				}
				continue
			}
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			p.observe(pod, ev.Type == watch.Deleted)
		}
	}()
	return p
}

func (p *runningPods) observe(pod *corev1.Pod, deleted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	up := !deleted && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning
	if up {
		p.running[pod.Name] = true
		p.nodes[pod.Spec.NodeName] = true
	} else {
		delete(p.running, pod.Name)
	}
	if n := len(p.running); n > p.max {
		p.max = n
		if n == p.want {
			close(p.reached)
		}
	}
}

func (p *runningPods) peak() (int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.max, len(p.nodes)
}

// kubernetesUserConfig writes a user config that selects the test cluster
// (images preloaded) and returns the XDG_CONFIG_HOME that reads it.
func kubernetesUserConfig(t *testing.T, kubeconfig string) string {
	t.Helper()
	xdg := t.TempDir()
	toml := "[sandbox]\nbackend = \"kubernetes\"\n[sandbox.kubernetes]\nkubeconfig = " + strconv.Quote(kubeconfig) + "\nimage_pull_policy = \"Never\"\n"
	if err := os.MkdirAll(filepath.Join(xdg, "fixpoint"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "fixpoint", "config.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return xdg
}

// TestBenchParallelOnKubernetes: `bench humaneval --parallel N` and `bench
// swe --parallel N` on the kubernetes backend put N sessions on the
// cluster at once, seen through the API server as N of fixpoint's pods
// Running together, and the cluster's scheduler placed them (each has a
// node). The swe instances reach N at once deterministically: the model
// answers no request until the watch has seen N pods Running, and every
// instance keeps its session while it waits for the model.
func TestBenchParallelOnKubernetes(t *testing.T) {
	kubeconfig := sandboxtest.RequireKubeconfig(t)
	const n = 3
	xdg := kubernetesUserConfig(t, kubeconfig)

	t.Run("humaneval", func(t *testing.T) {
		pods := watchRunningPods(t, kubeconfig, n)
		code, stdout, stderr := runCLI(t, map[string]string{"XDG_CONFIG_HOME": xdg},
			"bench", "humaneval", "--data", heData(t), "--oracle", "--parallel", strconv.Itoa(n), "--limit", "6",
			"--timeout", "15s", "--out", t.TempDir(), "--dir", t.TempDir())
		if code != exitOK || !strings.Contains(stdout, "6/6 passed after repair") {
			t.Fatalf("bench humaneval --parallel %d on kubernetes = %d\nstdout: %s\nstderr: %s", n, code, stdout, stderr)
		}
		if max, nodes := pods.peak(); max < n || nodes == 0 {
			t.Errorf("at most %d of fixpoint's pods ran at once on %d nodes, want %d on the cluster's choice", max, nodes, n)
		}
	})

	t.Run("swe", func(t *testing.T) {
		pods := watchRunningPods(t, kubeconfig, n)
		model := llmtest.NewServer(&llmtest.Script{Default: &llmtest.Reply{Content: "Plan: change nothing."}})
		t.Cleanup(model.Close)
		target, _ := url.Parse(model.URL())
		proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
		gate := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select { // hold every model request until N pods run at once
			case <-pods.reached:
			case <-r.Context().Done():
				return
			}
			proxy.ServeHTTP(w, r)
		})}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go gate.Serve(ln) // ends at Close
		t.Cleanup(func() { gate.Close() })
		ids := "kjd__idna-e00ed28,kjd__idna-4fdcc18,kjd__idna-f50df51"
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, map[string]string{"XDG_CONFIG_HOME": xdg, "FIXPOINT_BASE_URL": "http://" + ln.Addr().String() + "/v1"},
			"bench", "swe", "--instances", filepath.Join("..", "..", "internal", "bench", "swe", "corpus", "instances.jsonl"),
			"--model", "scripted", "--only", ids, "--parallel", strconv.Itoa(n), "--out", out)
		if code != exitOK {
			t.Fatalf("bench swe --parallel %d on kubernetes = %d\nstdout: %s\nstderr: %s", n, code, stdout, stderr)
		}
		results := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(out, "results.jsonl"))), "\n")
		if len(results) != n || !strings.Contains(stdout, "Backend kubernetes") {
			t.Errorf("results.jsonl has %d lines, want %d on kubernetes:\n%s", len(results), n, stdout)
		}
		for _, id := range strings.Split(ids, ",") {
			if !strings.Contains(stdout, "| "+id+" |") {
				t.Errorf("the report lacks %s:\n%s", id, stdout)
			}
		}
		for _, line := range results {
			if strings.Contains(line, `"error":`) {
				t.Errorf("an instance failed: %s\nstderr: %s", line, stderr)
			}
		}
		if max, nodes := pods.peak(); max < n || nodes == 0 {
			t.Errorf("at most %d of fixpoint's pods ran at once on %d nodes, want %d", max, nodes, n)
		}
		if len(model.Requests()) < n {
			t.Errorf("the model saw %d requests, want one per instance at least", len(model.Requests()))
		}
	})
}

// podImage is a sandbox pod's image as specified and as the node ran it
// (the container status's imageID: name@sha256:manifest digest).
type podImage struct{ spec, status string }

type podImages struct {
	mu   sync.Mutex
	pods map[string]podImage // guarded by mu
}

func (p *podImages) seen() []podImage {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []podImage
	for _, im := range p.pods {
		out = append(out, im)
	}
	return out
}

// watchPodImages records the images of this process's sandbox pods once
// their container has started.
func watchPodImages(t *testing.T, kubeconfig string) *podImages {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sel := "fixpoint.managed=true,fixpoint.pid=" + strconv.Itoa(os.Getpid())
	ctx, cancel := context.WithCancel(context.Background())
	list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		cancel()
		t.Fatalf("list pods %s: %v", sel, err)
	}
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: list.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatalf("watch pods %s: %v", sel, err)
	}
	p := &podImages{pods: map[string]podImage{}}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	go func() { // exits when the watch is stopped at cleanup
		defer close(done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].ImageID == "" {
				continue
			}
			p.mu.Lock()
			p.pods[pod.Name] = podImage{spec: pod.Spec.Containers[0].Image, status: pod.Status.ContainerStatuses[0].ImageID}
			p.mu.Unlock()
		}
	}()
	return p
}
