package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/wire"
)

// Run runs cmd through the supervisor. Output streams to cmd.Stdout and
// cmd.Stderr as it arrives; the supervisor caps each stream, so the memory
// held here is bounded by Limits.OutputCap. Cancelling ctx kills the
// command's processes and returns ctx's error; the session stays usable.
func (s *Session) Run(ctx context.Context, cmd sandbox.Command) (*sandbox.Result, error) {
	if len(cmd.Args) == 0 {
		return nil, fmt.Errorf("sandbox run: empty command")
	}
	dir := ""
	if cmd.Dir != "" && cmd.Dir != "." {
		d, err := sandbox.CleanRel(cmd.Dir)
		if err != nil {
			return nil, fmt.Errorf("sandbox run: dir: %w", err)
		}
		dir = d
	}
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	l := merge(cmd.Limits, s.limits)
	req := wire.RunRequest{
		Args:      cmd.Args,
		Dir:       dir,
		Env:       append(append([]string(nil), s.baseEnv...), cmd.Env...),
		Stdin:     cmd.Stdin,
		TimeoutMS: l.Timeout.Milliseconds(),
		CPUSec:    int64((l.CPUTime + time.Second - 1) / time.Second),
		FileSize:  l.FileSize,
		NoFile:    int64(l.NoFile),
		OutputCap: l.OutputCap,
	}
	// With a full-stream writer the supervisor sends everything (a zero cap
	// is no cap there) and the cap is applied here instead.
	full := cmd.FullStdout != nil || cmd.FullStderr != nil
	outCap := &hostCap{limit: l.OutputCap, stream: cmd.Stdout, full: cmd.FullStdout}
	errCap := &hostCap{limit: l.OutputCap, stream: cmd.Stderr, full: cmd.FullStderr}
	if full {
		req.OutputCap = 0
	}
	start := time.Now()
	if err := c.writeJSON(wire.Run, req); err != nil {
		return nil, s.streamErr(c, "run", err)
	}
	// On cancel, ask the supervisor to kill; if it does not finish the
	// command within a grace period, drop the container.
	finished := make(chan struct{})
	defer close(finished)
	stop := context.AfterFunc(ctx, func() {
		c.write(wire.Kill, nil)
		select {
		case <-finished:
		case <-time.After(5 * time.Second):
			c.hj.Close()
		}
	})
	defer stop()

	res := &sandbox.Result{}
	capBuf := l.OutputCap + int64(len(wire.TruncationMarker(l.OutputCap)))
	for {
		f, err := wire.ReadFrame(c.r)
		if err != nil {
			if ctx.Err() != nil {
				c.dead = true
				return nil, fmt.Errorf("sandbox %s: %w", s.name, ctx.Err())
			}
			return s.died(ctx, c, res, start, err)
		}
		switch f.Type {
		case wire.Stdout:
			if full {
				res.Stdout = outCap.add(res.Stdout, f.Payload)
				break
			}
			res.Stdout = appendCapped(res.Stdout, f.Payload, capBuf)
			write(cmd.Stdout, f.Payload)
		case wire.Stderr:
			if full {
				res.Stderr = errCap.add(res.Stderr, f.Payload)
				break
			}
			res.Stderr = appendCapped(res.Stderr, f.Payload, capBuf)
			write(cmd.Stderr, f.Payload)
		case wire.Exit:
			var st wire.ExitStatus
			if err := json.Unmarshal(f.Payload, &st); err != nil {
				return nil, s.streamErr(c, "run", err)
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("sandbox %s: %w", s.name, ctx.Err())
			}
			res.ExitCode, res.TimedOut, res.OOMKilled = st.Code, st.TimedOut, st.OOMKilled
			res.Truncated = st.Truncated || outCap.truncated || errCap.truncated
			res.Duration = time.Duration(st.DurationNS)
			if st.Leftover > 0 {
				s.b.log.Debug("killed processes left behind", "session", s.name, "count", st.Leftover)
			}
			return res, nil
		case wire.Error:
			return nil, fmt.Errorf("sandbox run %s: %w", cmd.Args[0], supervisorError(string(f.Payload)))
		default:
			return nil, s.streamErr(c, "run", fmt.Errorf("unexpected frame %q", f.Type))
		}
	}
}

// died handles a supervisor that went away during a command: usually the
// container was killed for memory. The result says so; the next call
// starts a new container.
func (s *Session) died(ctx context.Context, c *conn, res *sandbox.Result, start time.Time, err error) (*sandbox.Result, error) {
	serr := s.streamErr(c, "run", err)
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, sandbox.ErrClosed
	}
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

func appendCapped(buf, p []byte, limit int64) []byte {
	if room := limit - int64(len(buf)); room < int64(len(p)) {
		p = p[:max(room, 0)]
	}
	return append(buf, p...)
}

func write(w io.Writer, p []byte) {
	if w != nil {
		w.Write(p)
	}
}

// hostCap caps one stream on this side, for commands whose whole output
// the supervisor sends: full gets every byte; the result and stream get
// up to limit bytes, then the marker once, as the supervisor would.
type hostCap struct {
	limit     int64
	n         int64
	stream    io.Writer
	full      io.Writer
	truncated bool
}

func (c *hostCap) add(buf, p []byte) []byte {
	write(c.full, p)
	if c.truncated {
		return buf
	}
	if c.limit > 0 && c.n+int64(len(p)) > c.limit {
		p = p[:c.limit-c.n]
		c.truncated = true
	}
	c.n += int64(len(p))
	buf = append(buf, p...)
	write(c.stream, p)
	if c.truncated {
		m := wire.TruncationMarker(c.limit)
		buf = append(buf, m...)
		write(c.stream, []byte(m))
	}
	return buf
}
