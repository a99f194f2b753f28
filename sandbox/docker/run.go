package docker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

// Run runs cmd through the supervisor. Output streams to cmd.Stdout and
// cmd.Stderr as it arrives; the supervisor caps each stream, so the memory
// held here is bounded by Limits.OutputCap. Cancelling ctx kills the
// command's processes and returns ctx's error; the session stays usable.
func (s *Session) Run(ctx context.Context, cmd sandbox.Command) (*sandbox.Result, error) {
	if len(cmd.Args) == 0 {
		return nil, fmt.Errorf("sandbox run: empty command")
	}
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := c.Run(ctx, cmd, s.baseEnv, supclient.Merge(cmd.Limits, s.limits))
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("sandbox %s: %w", s.name, ctx.Err())
	case res != nil && errors.Is(err, supclient.ErrStream): // the stream broke mid-command
		return s.died(ctx, res, start, err)
	}
	return nil, s.wrap(ctx, err)
}

// died handles a supervisor that went away during a command: usually the
// container was killed for memory. The result (with the output that came
// before) says so; the next call starts a new container.
func (s *Session) died(ctx context.Context, res *sandbox.Result, start time.Time, err error) (*sandbox.Result, error) {
	if s.isClosed() {
		return nil, sandbox.ErrClosed
	}
	serr := s.streamErr(err)
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	info, ierr := s.b.cli.ContainerInspect(ictx, s.id)
	if ierr != nil || info.State == nil || info.State.Running {
		return nil, serr
	}
	res.Duration = time.Since(start)
	res.ExitCode = 137
	res.OOMKilled = info.State.OOMKilled
	if !res.OOMKilled {
		return nil, fmt.Errorf("%w (container exited with %d)", serr, info.State.ExitCode)
	}
	return res, nil
}
