package engine

import (
	"context"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
)

// ContainerLister is the one call of the Engine API ListContainers needs.
type ContainerLister interface {
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
}

// listAttempts bounds the retries of a list that raced a container's exit.
const listAttempts = 5

// ListContainers lists containers like ContainerList, and asks again when
// the engine's answer was a race with a container that exited while it
// was being listed. Podman before 4.4 (Debian 12 ships 4.3) fails the
// whole list with "read /proc/PID/cgroup: no such process" when a
// container's process ends between its open and its read of that file
// (podman#16383, fixed by podman#16504). Any other error is returned at
// once, and the last error after listAttempts.
func ListContainers(ctx context.Context, cli ContainerLister, opts container.ListOptions) ([]container.Summary, error) {
	var err error
	for attempt := 1; ; attempt++ {
		var list []container.Summary
		list, err = cli.ContainerList(ctx, opts)
		if err == nil || !raceWithExit(err) || attempt == listAttempts {
			return list, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// raceWithExit reports whether err is the engine's ESRCH from reading a
// process that had just exited.
func raceWithExit(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "/proc/") && strings.Contains(msg, "no such process")
}
