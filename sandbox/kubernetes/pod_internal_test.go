package kubernetes

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"golang.org/x/tools/txtar"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

var update = flag.Bool("update", false, "rewrite testdata/pod.golden")

// TestHardenedPod: the pod a session runs in is the golden file's (go test
// -run HardenedPod -update rewrites it; review the diff: it is the
// sandbox's isolation). The properties isolation rests on are asserted
// too, so an -update cannot quietly drop one.
func TestHardenedPod(t *testing.T) {
	base := podParams{
		Name: "fixpoint-000000000000", Namespace: "sandboxes", Image: "fixpoint-sandbox-python",
		PullPolicy: "Never", UID: 200001,
		Labels: map[string]string{LabelManaged: "true", LabelSession: "fixpoint-000000000000"},
		Limits: supclient.Defaults(sandbox.Limits{}),
	}
	cases := []struct {
		name string
		edit func(*podParams)
	}{
		{name: "default", edit: func(*podParams) {}},
		{name: "gvisor", edit: func(p *podParams) { p.RuntimeClass = "gvisor"; p.PullPolicy = "IfNotPresent" }},
		{name: "requests-and-sizes", edit: func(p *podParams) {
			p.CPURequest, p.MemoryRequest = resource.MustParse("500m"), resource.MustParse("4Gi")
			p.WorkspaceSize, p.TmpSize = 2<<30, 64<<20
			p.Limits.Memory, p.Limits.NanoCPUs = 512<<20, 1e9
		}},
		// A test pod with an installed node_modules: read-only, with its
		// writable layers.
		{name: "test-with-caches", edit: func(p *podParams) {
			p.Caches = []podCache{{Claim: "fixpoint-deps-node-modules-0123456789abcdef", Target: "/deps/node_modules", ReadOnly: true, Writable: []string{".cache", ".vite"}}}
		}},
		// The setup pod that fills it: writable, owned by its uid's group.
		{name: "setup", edit: func(p *podParams) {
			p.Caches = []podCache{{Claim: "fixpoint-deps-node-modules-0123456789abcdef", Target: "/deps/node_modules"}}
			p.FSGroup = p.UID
			p.Labels = map[string]string{LabelManaged: "true", LabelSession: "fixpoint-000000000000", "fixpoint.setup": "true"}
		}},
	}
	var ar txtar.Archive
	for _, c := range cases {
		p := base
		c.edit(&p)
		pod := hardenedPod(p)
		assertIsolated(t, c.name, pod, p)
		data, err := yaml.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		ar.Files = append(ar.Files, txtar.File{Name: c.name, Data: data})
	}
	pol, err := yaml.Marshal(denyAllPolicy("sandboxes"))
	if err != nil {
		t.Fatal(err)
	}
	ar.Files = append(ar.Files, txtar.File{Name: "networkpolicy", Data: pol})
	claim, err := yaml.Marshal(cacheClaim("fixpoint-deps-gomod-0123456789abcdef", "sandboxes", "fast-ssd", resource.MustParse("4Gi"),
		map[string]string{LabelManaged: "true", LabelCache: "deps", LabelCacheName: "gomod", LabelSetupKey: "0123456789abcdef", "fixpoint.project": "p1"}))
	if err != nil {
		t.Fatal(err)
	}
	ar.Files = append(ar.Files, txtar.File{Name: "cache-claim", Data: claim})
	got := txtar.Format(&ar)
	golden := filepath.Join("testdata", "pod.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run HardenedPod -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("hardenedPod differs from %s (review, then -update):\n%s", golden, got)
	}
}

func assertIsolated(t *testing.T, name string, pod *corev1.Pod, p podParams) {
	t.Helper()
	s := pod.Spec
	if s.HostNetwork || s.HostPID || s.HostIPC || s.ShareProcessNamespace != nil ||
		s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken ||
		s.EnableServiceLinks == nil || *s.EnableServiceLinks {
		t.Errorf("%s: pod shares the host or gets a token: %+v", name, s)
	}
	psc := s.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod security context %+v", name, psc)
	}
	if len(s.Containers) != 1 || len(s.InitContainers) != 0 || len(s.EphemeralContainers) != 0 {
		t.Fatalf("%s: want exactly one container", name)
	}
	c := s.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.Privileged == nil || *sc.Privileged || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("%s: container security context %+v", name, sc)
	}
	if c.Resources.Limits.Memory().Value() != p.Limits.Memory || c.Resources.Limits.Cpu().MilliValue() != p.Limits.NanoCPUs/1e6 {
		t.Errorf("%s: limits %v, want memory %d and %d nano CPUs", name, c.Resources.Limits, p.Limits.Memory, p.Limits.NanoCPUs)
	}
	if c.Resources.Requests.Memory().Cmp(*c.Resources.Limits.Memory()) > 0 || c.Resources.Requests.Cpu().Cmp(*c.Resources.Limits.Cpu()) > 0 {
		t.Errorf("%s: requests %v exceed limits %v", name, c.Resources.Requests, c.Resources.Limits)
	}
	readOnlyMount := map[string]bool{}
	for _, m := range c.VolumeMounts {
		readOnlyMount[m.Name] = m.ReadOnly
	}
	for _, v := range s.Volumes {
		if claim := v.PersistentVolumeClaim; claim != nil {
			// A dependency cache: read-only in every pod but the setup
			// pod (the only one with an fsGroup), which fills it.
			setup := p.FSGroup != 0
			if !setup && (!claim.ReadOnly || !readOnlyMount[v.Name]) {
				t.Errorf("%s: cache volume %s is writable in a test pod", name, v.Name)
			}
			if setup && (psc.FSGroup == nil || *psc.FSGroup != *psc.RunAsUser) {
				t.Errorf("%s: setup pod's fsGroup %v, want its uid %d", name, psc.FSGroup, *psc.RunAsUser)
			}
			continue
		}
		if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.IsZero() {
			t.Errorf("%s: volume %s is not a size-capped emptyDir: %+v", name, v.Name, v.VolumeSource)
		}
	}
	if p.FSGroup == 0 && psc.FSGroup != nil {
		t.Errorf("%s: a test pod has fsGroup %d", name, *psc.FSGroup)
	}
	if c.ImagePullPolicy != corev1.PullPolicy(p.PullPolicy) {
		t.Errorf("%s: pull policy %q, want %q", name, c.ImagePullPolicy, p.PullPolicy)
	}
	if pod.Labels[LabelManaged] != "true" {
		t.Errorf("%s: the NetworkPolicy would not select the pod: labels %v", name, pod.Labels)
	}
}

func TestDenyAllPolicySelectsSandboxes(t *testing.T) {
	p := denyAllPolicy("ns")
	if !slices.Equal(p.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) || len(p.Spec.Ingress) != 0 || len(p.Spec.Egress) != 0 {
		t.Errorf("policy %+v: want both directions and no rule", p.Spec)
	}
	if p.Spec.PodSelector.MatchLabels[LabelManaged] != "true" || len(p.Spec.PodSelector.MatchLabels) != 1 {
		t.Errorf("selector %+v, want %s=true only", p.Spec.PodSelector, LabelManaged)
	}
}

func TestParseNetProbe(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want netVerdict
	}{
		{name: "all blocked", out: "BLOCKED 10.0.0.1:10250 [Errno 101] Network is unreachable\nBLOCKED 10.0.0.2:6443 timed out\n", want: netBlocked},
		{name: "refused counts as reached", out: "BLOCKED 10.0.0.1:10250 timed out\nREACHABLE 10.0.0.2:6443 refused\n", want: netReachable},
		{name: "connected", out: "REACHABLE 10.0.0.1:10250 connected\n", want: netReachable},
		{name: "no tool", out: "UNKNOWN\n", want: netUnknown},
		{name: "nothing printed", out: "", want: netUnknown},
		{name: "noise only", out: "sh: 1: python3: not found\n", want: netUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := parseNetProbe(tc.out); got != tc.want {
				t.Errorf("parseNetProbe(%q) = %v, want %v", tc.out, got, tc.want)
			}
		})
	}
}

func TestBaseEnv(t *testing.T) {
	environ := []byte("PATH=/opt/py/bin:/usr/bin\x00HOSTNAME=fixpoint-1\x00KUBERNETES_SERVICE_HOST=10.96.0.1\x00HOME=/root\x00PYTHONDONTWRITEBYTECODE=1\x00")
	got := baseEnv(environ)
	want := []string{"PATH=/opt/py/bin:/usr/bin", "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1"}
	if !slices.Equal(got, want) {
		t.Errorf("baseEnv = %q, want %q", got, want)
	}
}

// TestBaseEnvReadOnlyGoCache: an image GOCACHE the copy step found
// unwritable moves to /tmp.
func TestBaseEnvReadOnlyGoCache(t *testing.T) {
	got := baseEnv([]byte("GOCACHE=/gocache\x00GOROOT=/usr/local/go\x00" + roGoCache + "=1\x00"))
	want := []string{"PATH=" + defaultPath, "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp", "GOCACHE=/tmp/.gocache", "GOROOT=/usr/local/go"}
	if !slices.Equal(got, want) {
		t.Errorf("baseEnv = %q, want %q", got, want)
	}
}

func TestLabelValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ci-host.example", "ci-host.example"},
		{"-weird host_name!-", "weird-host_name"},
		{string(bytes.Repeat([]byte("a"), 80)), string(bytes.Repeat([]byte("a"), 63))},
	}
	for _, tc := range tests {
		if got := labelValue(tc.in); got != tc.want {
			t.Errorf("labelValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSessionUIDs(t *testing.T) {
	for _, n := range []uint32{0, 1, 1<<32 - 1} {
		if u := uidFor(n); u < 200000 || u >= 1<<31 {
			t.Errorf("uidFor(%d) = %d, want in [200000, 2^31)", n, u)
		}
	}
}
