package kubernetes

import (
	"fmt"
	"maps"
	"path"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

const (
	containerName  = "sandbox"
	supervisorDir  = "/.fixpoint"
	supervisorPath = supervisorDir + "/supervisor"
	workspaceDir   = "/workspace"
	defaultPath    = supclient.DefaultPath
)

// podParams is what a session's pod is made of; everything else about it
// is fixed by hardenedPod.
type podParams struct {
	Name      string
	Namespace string
	Image     string
	// PullPolicy is "Never" (images preloaded on the nodes),
	// "IfNotPresent" or "Always".
	PullPolicy string
	UID        int64 // the session's own uid and gid (never 0)
	Labels     map[string]string
	Limits     sandbox.Limits // Memory and NanoCPUs become the container's limits
	// CPURequest and MemoryRequest are what the scheduler reserves; zero
	// means 100m and 128Mi (a 2-core node then holds many sessions).
	CPURequest    resource.Quantity
	MemoryRequest resource.Quantity
	RuntimeClass  string // "" = the cluster's default runtime
	// WorkspaceSize and TmpSize bound the /workspace and /tmp emptyDirs
	// (medium Memory, so they count against the memory limit too); zero
	// means 1 GiB and 256 MiB.
	WorkspaceSize, TmpSize int64
	// Caches are dependency caches on PersistentVolumeClaims (install.go):
	// read-only in a test pod, writable in the setup pod that fills them.
	Caches []podCache
	// FSGroup, when non-zero, is the pod's fsGroup: the kubelet hands the
	// writable cache volumes to this group (the setup pod's own uid), so
	// that a non-root install can write them.
	FSGroup int64
}

// podCache is one dependency cache volume of a pod.
type podCache struct {
	Claim    string // the PersistentVolumeClaim
	Target   string // where it is mounted
	ReadOnly bool
	// Writable names entries of Target that each get an empty in-memory
	// emptyDir over the read-only cache (sandbox.CacheMount.Writable).
	Writable []string
}

// cacheLayerSize bounds each writable layer over a read-only cache
// (node_modules/.cache).
const cacheLayerSize = 256 << 20

// supervisorSize bounds the emptyDir the supervisor binary is copied into.
const supervisorSize = 16 << 20

// hardenedPod is the pod a session runs in: one container that idles
// (its pid 1 is `sleep`) until the backend copies the supervisor in and
// starts it through one exec stream; non-root with a per-session uid, a
// read-only root filesystem, every capability dropped, no privilege
// escalation, the RuntimeDefault seccomp profile, no service account
// token, no service links, no host namespaces, memory and CPU limits, and
// size-capped in-memory emptyDirs for /workspace, /tmp and the
// supervisor. It is pure (testdata/pod.golden shows its output), so what
// isolates a sandbox can be read in one place. Network isolation is the
// NetworkPolicy of [denyAllPolicy] plus the backend's probe (netcheck.go).
func hardenedPod(p podParams) *corev1.Pod {
	wsSize, tmpSize := p.WorkspaceSize, p.TmpSize
	if wsSize <= 0 {
		wsSize = 1 << 30
	}
	if tmpSize <= 0 {
		tmpSize = 256 << 20
	}
	cpuReq, memReq := p.CPURequest, p.MemoryRequest
	if cpuReq.IsZero() {
		cpuReq = resource.MustParse("100m")
	}
	if memReq.IsZero() {
		memReq = resource.MustParse("128Mi")
	}
	mem := resource.NewQuantity(p.Limits.Memory, resource.BinarySI)
	cpu := resource.NewMilliQuantity(p.Limits.NanoCPUs/1e6, resource.DecimalSI)
	if cpuReq.Cmp(*cpu) > 0 {
		cpuReq = *cpu
	}
	if memReq.Cmp(*mem) > 0 {
		memReq = *mem
	}
	f, t := false, true
	zero := int64(0)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      p.Name,
			Namespace: p.Namespace,
			Labels:    maps.Clone(p.Labels),
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  &f,
			EnableServiceLinks:            &f,
			HostNetwork:                   false,
			HostPID:                       false,
			HostIPC:                       false,
			TerminationGracePeriodSeconds: &zero,
			// No cluster DNS: nothing a command resolves leads anywhere.
			DNSPolicy: corev1.DNSNone,
			DNSConfig: &corev1.PodDNSConfig{Nameservers: []string{"127.0.0.1"}},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   &t,
				RunAsUser:      &p.UID,
				RunAsGroup:     &p.UID,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            containerName,
				Image:           p.Image,
				ImagePullPolicy: corev1.PullPolicy(p.PullPolicy),
				// pid 1 only waits, reading a stdin nobody writes (images
				// need not have sleep); the supervisor runs as an exec, and
				// its sweep after each command spares pid 1 and itself.
				Command:    []string{"/bin/sh", "-c", "read _"},
				Stdin:      true,
				WorkingDir: workspaceDir,
				Env:        []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}}, // PATH stays the image's
				SecurityContext: &corev1.SecurityContext{
					Privileged:               &f,
					ReadOnlyRootFilesystem:   &t,
					AllowPrivilegeEscalation: &f,
					RunAsNonRoot:             &t,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					ProcMount:                ptr(corev1.DefaultProcMount),
				},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *mem},
					Requests: corev1.ResourceList{corev1.ResourceCPU: cpuReq, corev1.ResourceMemory: memReq},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "workspace", MountPath: workspaceDir},
					{Name: "tmp", MountPath: "/tmp"},
					{Name: "supervisor", MountPath: supervisorDir},
				},
			}},
			Volumes: []corev1.Volume{
				memoryDir("workspace", wsSize),
				memoryDir("tmp", tmpSize),
				memoryDir("supervisor", supervisorSize),
			},
		},
	}
	if p.RuntimeClass != "" {
		rc := p.RuntimeClass
		pod.Spec.RuntimeClassName = &rc
	}
	if p.FSGroup != 0 {
		g := p.FSGroup
		pod.Spec.SecurityContext.FSGroup = &g
	}
	c := &pod.Spec.Containers[0]
	for i, cache := range p.Caches {
		name := fmt.Sprintf("cache-%d", i)
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: cache.Claim, ReadOnly: cache.ReadOnly},
		}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: cache.Target, ReadOnly: cache.ReadOnly})
		for j, w := range cache.Writable {
			wname := fmt.Sprintf("cache-%d-w%d", i, j)
			pod.Spec.Volumes = append(pod.Spec.Volumes, memoryDir(wname, cacheLayerSize))
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: wname, MountPath: path.Join(cache.Target, w)})
		}
	}
	return pod
}

// memoryDir is an in-memory emptyDir capped at size bytes: the kubelet
// evicts the pod when it holds more (a write does not get ENOSPC as on a
// tmpfs with size=, except where the kubelet sizes the tmpfs itself).
func memoryDir(name string, size int64) corev1.Volume {
	q := resource.NewQuantity(size, resource.BinarySI)
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: q},
	}}
}

func ptr[T any](v T) *T { return &v }

// policyName is the NetworkPolicy the backend keeps in its namespace.
const policyName = "fixpoint-sandbox-deny-all"

// denyAllPolicy selects every pod fixpoint manages and allows nothing in
// or out: no ingress rule and no egress rule (DNS included). It holds only
// where the cluster's network plugin enforces NetworkPolicy; see
// netcheck.go for what the backend does where it does not.
func denyAllPolicy(namespace string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      policyName,
			Namespace: namespace,
			Labels:    map[string]string{LabelManaged: "true"},
		},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelManaged: "true"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{},
			Egress:      []networkingv1.NetworkPolicyEgressRule{},
		},
	}
}

// uidFor maps a random number to the session's uid: above the ids images
// use for their own users and below 2^31, so that no two sessions on a
// node share a uid by design and a uid-wide limit (RLIMIT_NPROC) or
// signal permission never spans sessions.
func uidFor(n uint32) int64 { return 200000 + int64(n%(1<<30)) }
