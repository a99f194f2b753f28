package sandboxtest

import (
	"cmp"
	"os"
	"testing"
)

// DefaultTestKubeconfig is where .ci/k8s-up writes the CI cluster's admin
// kubeconfig (see /work/k8s/CONTRACT.md of the CI scripts).
const DefaultTestKubeconfig = "/run/fixpoint-k8s/kubeconfig"

// RequireKubeconfig returns the kubeconfig of the test cluster:
// $FIXPOINT_TEST_KUBECONFIG, else DefaultTestKubeconfig. When the file is
// missing the test fails under CI=true and skips otherwise, naming the
// path and how to bring the cluster up.
func RequireKubeconfig(t testing.TB) string {
	t.Helper()
	path := cmp.Or(os.Getenv("FIXPOINT_TEST_KUBECONFIG"), DefaultTestKubeconfig)
	if _, err := os.Stat(path); err != nil {
		unavailable(t, "no test cluster: kubeconfig "+path+" is missing ("+err.Error()+"); run `sudo .ci/k8s-up` or set FIXPOINT_TEST_KUBECONFIG")
	}
	return path
}
