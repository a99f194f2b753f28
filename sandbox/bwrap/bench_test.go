package bwrap_test

import (
	"os/exec"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
)

// BenchmarkPythonPass compares `python3 -c pass` bare, in the none
// backend and in bwrap: go test -run XXX -bench PythonPass ./sandbox/bwrap
func BenchmarkPythonPass(b *testing.B) {
	args := []string{"python3", "-c", "pass"}
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(args[0], args[1:]...).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	hb, _ := host.New(&host.Options{Warn: discard{}})
	bw, err := bwrap.New(nil)
	if err != nil {
		b.Skip(err)
	}
	for _, be := range []sandbox.Backend{hb, bw} {
		b.Run(be.Name(), func(b *testing.B) {
			s, err := be.Start(b.Context(), sandbox.Spec{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				res, err := s.Run(b.Context(), sandbox.Command{Args: args})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(res, err)
				}
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
