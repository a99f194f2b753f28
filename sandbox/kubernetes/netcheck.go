package kubernetes

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// The deny-all NetworkPolicy isolates sandbox pods only where the
// cluster's network plugin enforces NetworkPolicy; many do not (flannel,
// kindnet before 0.24, the bridge plugin), and the API accepts the policy
// all the same. So the first session of a Backend checks the property
// itself: from inside its pod it opens TCP connections to its node's
// kubelet port and to the API server. A connection that is accepted or
// refused (the packets got there) means the pod is not isolated: Start
// fails (NetworkCheckEnforce) or warns (NetworkCheckWarn). Timeouts and
// "unreachable" mean blocked. An image with neither python3 nor bash
// cannot run the check: the backend warns that isolation is unverified.

// netProbe prints one line per target: "REACHABLE host:port why",
// "BLOCKED host:port why"; or "UNKNOWN" when it has no tool to connect.
const netProbe = `
if command -v python3 >/dev/null 2>&1; then
python3 - "$@" <<'PY'
import socket, sys
for t in sys.argv[1:]:
    h, p = t.rsplit(":", 1)
    s = socket.socket(socket.AF_INET6 if ":" in h else socket.AF_INET)
    s.settimeout(2)
    try:
        s.connect((h.strip("[]"), int(p)))
        print("REACHABLE", t, "connected")
    except ConnectionRefusedError:
        print("REACHABLE", t, "refused")
    except OSError as e:
        print("BLOCKED", t, e)
    finally:
        s.close()
PY
elif command -v bash >/dev/null 2>&1; then
for t in "$@"; do
  h=${t%:*}; p=${t##*:}
  if err=$(timeout 2 bash -c 'exec 3<>/dev/tcp/$0/$1' "$h" "$p" 2>&1); then echo "REACHABLE $t connected"
  else case "$err" in *refused*) echo "REACHABLE $t refused";; *) echo "BLOCKED $t $err";; esac; fi
done
else echo UNKNOWN; fi
`

// netVerdict is what the probe found.
type netVerdict int

const (
	netBlocked netVerdict = iota
	netReachable
	netUnknown
)

// parseNetProbe reads the probe's output: reachable when any target was,
// unknown when the probe could not run or named no target.
func parseNetProbe(out string) (netVerdict, string) {
	var reached []string
	seen := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "REACHABLE":
			reached = append(reached, f[1])
			seen = true
		case "BLOCKED":
			seen = true
		}
	}
	switch {
	case len(reached) > 0:
		return netReachable, strings.Join(reached, ", ")
	case !seen:
		return netUnknown, strings.TrimSpace(out)
	}
	return netBlocked, ""
}

// probeTargets are what a sandbox pod must not reach: its node's kubelet
// and the API server (unless it is on a loopback address, which inside a
// pod is the pod itself).
func (b *Backend) probeTargets(nodeIP string) []string {
	var t []string
	if nodeIP != "" {
		t = append(t, net.JoinHostPort(nodeIP, "10250"))
	}
	if u, err := url.Parse(b.cfg.Host); err == nil && u.Hostname() != "" {
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = "443"
		}
		if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
			t = append(t, net.JoinHostPort(host, port))
		}
	}
	return t
}

// checkNetwork runs the isolation check in s once per Backend.
func (b *Backend) checkNetwork(ctx context.Context, s *Session) error {
	b.netMu.Lock()
	defer b.netMu.Unlock()
	if b.netChecked {
		return nil
	}
	targets := b.probeTargets(s.nodeIP)
	if len(targets) == 0 {
		b.warn("kubernetes sandbox: no node address to check network isolation against; the NetworkPolicy " + policyName + " is all that isolates sandbox pods")
		b.netChecked = true
		return nil
	}
	res, err := s.Run(ctx, sandbox.Command{Args: append([]string{"sh", "-c", netProbe, "netprobe"}, targets...),
		Limits: sandbox.Limits{Timeout: 30 * time.Second}})
	if err != nil {
		return fmt.Errorf("kubernetes sandbox network check: %w", err)
	}
	verdict, detail := parseNetProbe(string(res.Stdout))
	switch verdict {
	case netUnknown:
		b.warn(fmt.Sprintf("kubernetes sandbox: image %s has neither python3 nor bash, so fixpoint could not check that the cluster enforces the NetworkPolicy %s; sandbox pods may have network access", s.spec.Image, policyName))
	case netReachable:
		msg := fmt.Sprintf("kubernetes sandbox: a sandbox pod in namespace %s reached %s despite the deny-all NetworkPolicy %s: this cluster's network plugin does not enforce NetworkPolicy, so sandboxed code would have network access", b.ns, detail, policyName)
		if b.opts.NetworkCheck != NetworkCheckWarn {
			return fmt.Errorf("%s; use a network plugin that enforces NetworkPolicy (Calico, Cilium) or, accepting the risk, set sandbox.kubernetes.network_check = \"warn\": %w", msg, sandbox.ErrUnavailable)
		}
		b.warn(msg)
	}
	b.netChecked = true
	return nil
}

func (b *Backend) warn(msg string) {
	b.log.Warn(msg)
	if b.opts.Warn != nil {
		b.opts.Warn(msg)
	}
}
