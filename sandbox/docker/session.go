package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/docker/docker/api/types/mount"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

// Session is one sandbox container. It implements sandbox.Session: one
// goroutine at a time may call Sync, Run and ReadFile; Close may be called
// concurrently to abort. When the container dies (its supervisor was
// killed), the next call replaces it transparently and re-syncs the last
// snapshot. The protocol to the container's supervisor is spoken by
// supclient, over the container's attached stdin and stdout.
type Session struct {
	b        *Backend
	spec     sandbox.Spec
	limits   sandbox.Limits // spec.Limits with defaults
	supVol   string
	hostVols map[string]string // Spec.Caches target -> volume holding a HostDir copy
	// toolMounts are the read-only copies of Spec.HostTools (copyTools).
	toolMounts []mount.Mount
	baseEnv    []string
	user       string // uid:gid
	// seedInto is the fresh Go build cache that boot fills from the
	// user cache mounted at goCacheSeedDir; "" when there is none.
	seedInto string
	// seedAsked: with spec.DeferSeed, the copy into seedInto was asked for
	// (SeedBuildCache or the first Sync); boot does it only then. Used
	// from the session's one calling goroutine.
	seedAsked bool

	// Set by boot; replaced by restart (only from the calling goroutine).
	name string
	id   string
	conn *supclient.Conn

	last   *sandbox.Snapshot // last synced snapshot, for restart
	hashes supclient.Hashes  // content hashes of last's in-memory files

	mu     sync.Mutex // guards closed, name, id, conn
	closed bool

	closeOnce sync.Once
	closeErr  error
}

// Name is the session name, also the container's name and the value of
// its fixpoint.session label.
func (s *Session) Name() string { return s.name }

// HostCacheVolume is the volume holding the copy of the host cache
// mounted at target (a Spec.Caches entry with HostDir), or "".
func (s *Session) HostCacheVolume(target string) string { return s.hostVols[target] }

// ContainerID is the current container's id.
func (s *Session) ContainerID() string { return s.id }

// ready returns the live connection, replacing a dead container first.
func (s *Session) ready(ctx context.Context) (*supclient.Conn, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, sandbox.ErrClosed
	}
	if !s.conn.Dead() {
		return s.conn, nil
	}
	s.b.log.Info("sandbox died; replacing it", "session", s.name)
	s.removeContainer(ctx)
	if err := s.boot(ctx); err != nil {
		return nil, fmt.Errorf("replace sandbox: %w", err)
	}
	s.mu.Lock()
	closed = s.closed
	s.mu.Unlock()
	if closed {
		s.removeContainer(ctx)
		return nil, sandbox.ErrClosed
	}
	if s.last != nil {
		last := s.last
		s.last, s.hashes = nil, supclient.Hashes{}
		if _, err := s.sync(ctx, s.conn, last); err != nil {
			return nil, fmt.Errorf("replace sandbox: %w", err)
		}
	}
	return s.conn, nil
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// wrap turns an error of the supervisor connection into the error to
// return: sandbox.ErrClosed once the session is closed, the context's
// error when it was cancelled, and for a failed stream (the container or
// the engine went away) the session's name, or ErrUnavailable when the
// engine itself stopped answering. The supervisor's own errors (a missing
// file) and the workspace's (a file changed while synced) pass as they are.
func (s *Session) wrap(ctx context.Context, err error) error {
	stream := errors.Is(err, supclient.ErrStream)
	if stream && s.isClosed() {
		return sandbox.ErrClosed
	}
	if ctx.Err() != nil {
		return fmt.Errorf("sandbox %s: %w", s.name, ctx.Err())
	}
	if !stream {
		return err
	}
	return s.streamErr(err)
}

// streamErr names the session in the error of a failed stream, and says
// so when the engine itself is gone.
func (s *Session) streamErr(err error) error {
	pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, perr := s.b.cli.Ping(pctx); perr != nil { // the engine itself is gone: say so
		return fmt.Errorf("sandbox %s: the Docker engine stopped answering (%w: %v); start it again and retry", s.name, sandbox.ErrUnavailable, err)
	}
	return fmt.Errorf("sandbox %s: %w", s.name, err)
}

// Sync makes /workspace equal to snap for every file snap holds: files
// whose content, mode or on-disk state changed since the last Sync are
// sent as one tar stream; files of the previous snapshot that snap lacks
// are deleted. Files that commands created are left alone (caches).
func (s *Session) Sync(ctx context.Context, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	s.SeedBuildCache(ctx) // a deferred seed, when nobody asked for it yet
	c, err := s.ready(ctx)
	if err != nil {
		return sandbox.SyncStats{}, err
	}
	return s.sync(ctx, c, snap)
}

// SeedBuildCache implements sandbox.BuildCacheSeeder: for a session
// started with Spec.DeferSeed, it copies the project's user Go build cache
// (mounted read-only since the start) into the session's fresh cache, as
// it is now. Only the first call copies; without DeferSeed, boot has.
func (s *Session) SeedBuildCache(ctx context.Context) {
	if !s.spec.DeferSeed || s.seedAsked {
		return
	}
	s.seedAsked = true
	s.seedGoCache(ctx)
}

func (s *Session) sync(ctx context.Context, c *supclient.Conn, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	st, err := c.Sync(ctx, snap, &s.hashes)
	if err != nil {
		return st, s.wrap(ctx, err)
	}
	s.last = snap
	return st, nil
}

// ReadFile reads a workspace file (at most 8 MiB). A missing file's error
// wraps fs.ErrNotExist.
func (s *Session) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	if _, err := sandbox.CleanRel(rel); err != nil {
		return nil, err
	}
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	data, err := c.ReadFile(ctx, rel)
	if err != nil {
		return nil, s.wrap(ctx, err)
	}
	return data, nil
}

// Changes lists how the sandbox workspace differs from the last Sync:
// synced files whose contents changed, files commands created, and synced
// files that are gone. Directories named in skip (for example ".git",
// "__pycache__", "node_modules") are not entered. Paths are
// slash-separated, relative to the workspace root, sorted; read them with
// ReadFile. This is how a verified edit made inside the sandbox leaves it.
func (s *Session) Changes(ctx context.Context, skip ...string) (*Changes, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := c.Changes(ctx, skip...)
	if err != nil {
		return nil, s.wrap(ctx, err)
	}
	return ch, nil
}

// Changes is what Session.Changes found.
type Changes = supclient.Changes

// Close removes the container. It may be called concurrently with a
// running command, which then returns sandbox.ErrClosed.
// Every call returns once the container is gone (or removal failed).
func (s *Session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.closeOnce.Do(func() {
		s.closeErr = s.removeContainer(context.Background())
		if s.closeErr == nil {
			// The engine answers: cheaply retry what earlier sessions left.
			s.b.retryPending(context.Background(), retryOnSessionDone)
		}
	})
	return s.closeErr
}

func (s *Session) removeContainer(ctx context.Context) error {
	s.mu.Lock()
	c, id := s.conn, s.id
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
	if id == "" {
		return nil
	}
	// A failed removal is recorded on the Backend and retried by the next
	// Start, Session.Close or Backend.Close.
	if err := s.b.removeOrDefer(ctx, removeTimeout, leftover{id: id, session: s.name}); err != nil {
		return fmt.Errorf("remove sandbox %s: %w", s.name, err)
	}
	s.b.log.Debug("sandbox removed", "session", s.name)
	return nil
}

var _ sandbox.Session = (*Session)(nil)
