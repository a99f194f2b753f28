package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/docker/docker/api/types/container"

	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
)

// flakyLister fails its first calls with errs, then lists one container.
type flakyLister struct {
	errs  []error
	calls int
}

func (f *flakyLister) ContainerList(context.Context, container.ListOptions) ([]container.Summary, error) {
	f.calls++
	if f.calls <= len(f.errs) {
		return nil, f.errs[f.calls-1]
	}
	return []container.Summary{{ID: "c1"}}, nil
}

func TestListContainersRetriesPodmansExitRace(t *testing.T) {
	race := errors.New("Error response from daemon: read /proc/10276/cgroup: no such process")
	t.Run("race then answer", func(t *testing.T) {
		f := &flakyLister{errs: []error{race, race}}
		list, err := engine.ListContainers(t.Context(), f, container.ListOptions{All: true})
		if err != nil || len(list) != 1 || f.calls != 3 {
			t.Fatalf("got %v, %v after %d calls; want the list after 3", list, err, f.calls)
		}
	})
	t.Run("race every time", func(t *testing.T) {
		f := &flakyLister{errs: []error{race, race, race, race, race, race, race}}
		_, err := engine.ListContainers(t.Context(), f, container.ListOptions{})
		if err == nil || f.calls != 5 {
			t.Fatalf("got %v after %d calls; want the race's error after 5", err, f.calls)
		}
	})
	// Only the race's own error is asked again: one that names /proc or
	// says "no such process" alone is another failure.
	for _, msg := range []string{
		"Cannot connect to the Docker daemon",
		"open /proc/self/mountinfo: permission denied",
		"exec: no such process",
	} {
		t.Run("other errors at once: "+msg, func(t *testing.T) {
			other := errors.New(msg)
			f := &flakyLister{errs: []error{other}}
			_, err := engine.ListContainers(t.Context(), f, container.ListOptions{})
			if !errors.Is(err, other) || f.calls != 1 {
				t.Fatalf("got %v after %d calls; want %v after 1", err, f.calls, other)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		f := &flakyLister{errs: []error{race, race}}
		_, err := engine.ListContainers(ctx, f, container.ListOptions{})
		if err == nil || f.calls != 1 {
			t.Fatalf("got %v after %d calls; want the race's error after 1", err, f.calls)
		}
	})
}
