package docker_test

import (
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func BenchmarkRun(b *testing.B) {
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"true", []string{"true"}},
		{"python3-pass", []string{"python3", "-c", "pass"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			_, s := newSessionB(b)
			var inside time.Duration
			for b.Loop() {
				res, err := s.Run(b.Context(), sandbox.Command{Args: bc.args})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("Run = %+v, %v", res, err)
				}
				inside += res.Duration
			}
			b.ReportMetric(float64(inside.Nanoseconds())/float64(b.N), "ns-inside/op")
		})
	}
}
