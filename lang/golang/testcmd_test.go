package golang

import (
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Runs with model-written code never read Go's test-result cache.
func TestUntrustedDisablesTestCache(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"detected", []string{"go", "test", "-json", "./..."}, []string{"go", "test", "-count=1", "-json", "./..."}},
		{"count already given", []string{"go", "test", "-count=3", "-json", "./..."}, []string{"go", "test", "-count=3", "-json", "./..."}},
		{"count as two words", []string{"go", "test", "-count", "2", "./..."}, []string{"go", "test", "-count", "2", "./..."}},
		{"shell string", []string{"sh", "-c", "go test ./..."}, []string{"sh", "-c", "go test ./..."}},
		{"not go test", []string{"go", "vet", "./..."}, []string{"go", "vet", "./..."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testrun.Runner{Name: testrun.RunnerGo, Args: slices.Clone(tt.args)}
			got := Language{}.Untrusted(in)
			if !slices.Equal(got.Args, tt.want) {
				t.Errorf("Untrusted(%q) = %q, want %q", tt.args, got.Args, tt.want)
			}
			if !slices.Equal(in.Args, tt.args) {
				t.Errorf("Untrusted changed its input's args to %q", in.Args)
			}
		})
	}
}
