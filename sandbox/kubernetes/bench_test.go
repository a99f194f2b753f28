package kubernetes_test

import (
	"context"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/kubernetes"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// BenchmarkSandbox measures, side by side in one run, the docker and
// kubernetes backends' per-command cost (`true` through a warm session)
// and session start (Start until the supervisor is ready; Close not
// counted), with the image present:
//
//	go test ./sandbox/kubernetes -run '^$' -bench Sandbox -benchtime 30x
func BenchmarkSandbox(b *testing.B) {
	open := []struct {
		name string
		open func(b *testing.B) sandbox.Backend
	}{
		{"docker", func(b *testing.B) sandbox.Backend {
			cli := sandboxtest.RequireDocker(b)
			d, err := docker.New(b.Context(), &docker.Options{Client: cli})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { d.Close() })
			return d
		}},
		{"kubernetes", func(b *testing.B) sandbox.Backend {
			k, err := kubernetes.New(b.Context(), &kubernetes.Options{Kubeconfig: sandboxtest.RequireKubeconfig(b), PullPolicy: "Never"})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { k.Close() })
			return k
		}},
	}
	spec := sandbox.Spec{Image: testImage, Limits: sandbox.Limits{Timeout: time.Minute}}
	for _, o := range open {
		b.Run(o.name+"/command", func(b *testing.B) {
			be := o.open(b)
			s, err := be.Start(b.Context(), spec)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			cmd := sandbox.Command{Args: []string{"true"}}
			for b.Loop() {
				if res, err := s.Run(b.Context(), cmd); err != nil || res.ExitCode != 0 {
					b.Fatalf("Run = %v, %v", res, err)
				}
			}
		})
		b.Run(o.name+"/start", func(b *testing.B) {
			be := o.open(b)
			warm, err := be.Start(b.Context(), spec) // the kubernetes network check runs once, here
			if err != nil {
				b.Fatal(err)
			}
			warm.Close()
			for b.Loop() {
				s, err := be.Start(b.Context(), spec)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if _, err := s.Run(ctx, sandbox.Command{Args: []string{"true"}}); err != nil {
					b.Fatal(err)
				}
				cancel()
				s.Close()
				b.StartTimer()
			}
		})
	}
}
