package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
)

// Bounds on removal attempts, so a dead or hanging engine never holds up a
// caller for long.
const (
	removeTimeout      = 30 * time.Second // one Session.Close removal
	retryOnStart       = 5 * time.Second  // all pending removals before a Start
	retryOnSessionDone = 2 * time.Second  // after a successful Session.Close
	retryOnClose       = 15 * time.Second // Backend.Close
)

// leftover is a container or volume fixpoint created whose removal failed
// (usually because the engine was unreachable). The Backend retries it.
type leftover struct {
	volume  bool   // a volume, else a container
	id      string // container id or volume name
	session string // for logs
}

func (l leftover) String() string {
	if l.volume {
		return "volume " + l.id
	}
	return fmt.Sprintf("container %.12s (%s)", l.id, l.session)
}

// remove removes l, force-removing a container's anonymous volumes too. A
// resource already gone counts as removed.
func (b *Backend) remove(ctx context.Context, l leftover) error {
	var err error
	if l.volume {
		err = b.cli.VolumeRemove(ctx, l.id, true)
	} else {
		err = b.cli.ContainerRemove(ctx, l.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
		// Podman refuses a forced removal that races with the container
		// stopping by itself ("container state improper"); once stopped,
		// removal succeeds.
		for i := 0; i < 5 && err != nil && strings.Contains(err.Error(), "container state improper"); i++ {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(100 * time.Millisecond):
			}
			err = b.cli.ContainerRemove(ctx, l.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
		}
	}
	if err != nil && !cerrdefs.IsNotFound(err) {
		return err
	}
	return nil
}

// removeOrDefer removes l within timeout (every caller passes
// removeTimeout), even when ctx is already cancelled; when that fails, l is
// recorded so that the next Start, Session.Close or Backend.Close retries
// it.
func (b *Backend) removeOrDefer(ctx context.Context, timeout time.Duration, l leftover) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := b.remove(rctx, l); err != nil {
		b.pmu.Lock()
		b.pending[l.id] = l
		b.pmu.Unlock()
		b.log.Debug("sandbox removal failed; will retry", "what", l.String(), "err", err)
		return err
	}
	return nil
}

// Pending is the number of containers and volumes whose removal failed and
// is still to be retried (by the next Start, Session.Close or Close).
func (b *Backend) Pending() int {
	b.pmu.Lock()
	defer b.pmu.Unlock()
	return len(b.pending)
}

// retryPending tries again to remove what earlier removals left, within
// timeout in all. It stops at the first failure that is not about one
// resource (the engine is still unreachable), so a dead engine costs one
// failed call, not one per leftover. It returns the error of the first
// failure and how many leftovers remain.
func (b *Backend) retryPending(ctx context.Context, timeout time.Duration) (int, error) {
	b.pmu.Lock()
	if len(b.pending) == 0 {
		b.pmu.Unlock()
		return 0, nil
	}
	todo := make([]leftover, 0, len(b.pending))
	for _, l := range b.pending {
		todo = append(todo, l)
	}
	b.pmu.Unlock()

	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	var first error
	for _, l := range todo {
		err := b.remove(rctx, l)
		if err == nil {
			b.pmu.Lock()
			delete(b.pending, l.id)
			b.pmu.Unlock()
			b.log.Debug("removed leftover sandbox resource", "what", l.String())
			continue
		}
		b.log.Debug("leftover sandbox resource still not removable", "what", l.String(), "err", err)
		if first == nil {
			first = fmt.Errorf("remove %s: %w", l, err)
		}
		if client.IsErrConnectionFailed(err) || errors.Is(err, context.DeadlineExceeded) || rctx.Err() != nil {
			break
		}
	}
	return b.Pending(), first
}

// createTimeout bounds a container create that no longer follows its
// caller's context.
const createTimeout = 2 * time.Minute

// createContainer creates a container and, unlike a plain ContainerCreate
// with ctx, never leaves one nobody knows of: a request cancelled while
// in flight may still create the container in the engine, with no ID
// returned to remove it by. The create runs to its end; when ctx ended
// meanwhile, the container is removed and ctx's error returned. session
// names it in a deferred removal.
func (b *Backend) createContainer(ctx context.Context, cfg *container.Config, hc *container.HostConfig, name, session string) (container.CreateResponse, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	defer cancel()
	created, err := b.cli.ContainerCreate(cctx, cfg, hc, nil, nil, name)
	if err != nil {
		return created, err
	}
	if ctx.Err() != nil {
		b.removeOrDefer(ctx, removeTimeout, leftover{id: created.ID, session: session})
		return container.CreateResponse{}, ctx.Err()
	}
	return created, nil
}
