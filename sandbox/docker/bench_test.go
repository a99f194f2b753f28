package docker_test

import (
	"cmp"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
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

// BenchmarkStart is the fixed cost of one session on docker, as a fix of a
// small suite pays it: start, one command, close. python: no build cache;
// go-fresh: the verifying run's session (an anonymous volume over the
// image's Go build cache directory: empty behind the image's GOCACHEPROG,
// else filled with a copy of the prebuilt cache); go-user: a project's session
// whose cache volume already exists. FIXPOINT_TEST_GO_IMAGE compares
// another go image (one built with `sandbox images build --tag`).
func BenchmarkStart(b *testing.B) {
	cli := sandboxtest.RequireDocker(b)
	goImage := cmp.Or(os.Getenv("FIXPOINT_TEST_GO_IMAGE"), "fixpoint-sandbox-go")
	project := fmt.Sprintf("bench-start-%d", os.Getpid())
	for _, bc := range []struct {
		name string
		spec sandbox.Spec
	}{
		{"python", sandbox.Spec{Image: testImage}},
		{"go-fresh", sandbox.Spec{Image: goImage, BuildCache: sandbox.BuildCacheFresh}},
		{"go-user", sandbox.Spec{Image: goImage, BuildCache: sandbox.BuildCacheUser, Labels: map[string]string{sandbox.LabelProject: project}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			sandboxtest.RequireImage(b, cli, bc.spec.Image)
			be, err := docker.New(b.Context(), &docker.Options{Client: cli, NoReap: true})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			removeNewGoCaches(b, cli)
			var start, closing time.Duration
			for b.Loop() {
				t0 := time.Now()
				s, err := be.Start(b.Context(), bc.spec)
				if err != nil {
					b.Fatal(err)
				}
				if res, err := s.Run(b.Context(), sandbox.Command{Args: []string{"true"}}); err != nil || res.ExitCode != 0 {
					b.Fatalf("Run = %+v, %v", res, err)
				}
				t1 := time.Now()
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				start, closing = start+t1.Sub(t0), closing+time.Since(t1)
			}
			// A fix removes its sessions in the background: the start (and
			// first command) is what stands on its path.
			b.ReportMetric(start.Seconds()/float64(b.N), "s-start/op")
			b.ReportMetric(closing.Seconds()/float64(b.N), "s-close/op")
		})
	}
}
