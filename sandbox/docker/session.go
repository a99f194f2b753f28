package docker

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/docker/docker/api/types"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/wire"
)

// Session is one sandbox container. It implements sandbox.Session: one
// goroutine at a time may call Sync, Run and ReadFile; Close may be called
// concurrently to abort. When the container dies (its supervisor was
// killed), the next call replaces it transparently and re-syncs the last
// snapshot.
type Session struct {
	b        *Backend
	spec     sandbox.Spec
	limits   sandbox.Limits // spec.Limits with defaults
	supVol   string
	hostVols map[string]string // Spec.Caches target -> volume holding a HostDir copy
	baseEnv  []string
	user     string // uid:gid
	// seedInto is the fresh Go build cache that boot fills from the
	// user cache mounted at goCacheSeedDir; "" when there is none.
	seedInto string

	// Set by boot; replaced by restart (only from the calling goroutine).
	name string
	id   string
	conn *conn

	last   *sandbox.Snapshot    // last synced snapshot, for restart
	hashes map[string]hashEntry // content hashes of last, by path

	mu     sync.Mutex // guards closed, name, id, conn
	closed bool

	closeOnce sync.Once
	closeErr  error
}

type hashEntry struct {
	data []byte // the hashed slice, kept so its address stays unique
	hash string
}

// conn is the framed stream to one supervisor.
type conn struct {
	hj types.HijackedResponse
	r  io.Reader

	wmu  sync.Mutex // serialises frames written to hj.Conn
	dead bool       // the stream failed; only the calling goroutine touches it
}

func (c *conn) write(typ byte, p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return wire.Write(c.hj.Conn, typ, p)
}

func (c *conn) writeJSON(typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.write(typ, b)
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
func (s *Session) ready(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, sandbox.ErrClosed
	}
	if !s.conn.dead {
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
		s.last, s.hashes = nil, map[string]hashEntry{}
		if _, err := s.sync(ctx, s.conn, last); err != nil {
			return nil, fmt.Errorf("replace sandbox: %w", err)
		}
	}
	return s.conn, nil
}

// streamErr turns a failed read or write into the error to return, and
// marks the connection dead.
func (s *Session) streamErr(c *conn, what string, err error) error {
	c.dead = true
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return sandbox.ErrClosed
	}
	pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, perr := s.b.cli.Ping(pctx); perr != nil { // the engine itself is gone: say so
		return fmt.Errorf("sandbox %s: %s: the Docker engine stopped answering (%w: %v); start it again and retry", s.name, what, sandbox.ErrUnavailable, err)
	}
	return fmt.Errorf("sandbox %s: %s: %w", s.name, what, err)
}

// Sync makes /workspace equal to snap for every file snap holds: files
// whose content, mode or on-disk state changed since the last Sync are
// sent as one tar stream; files of the previous snapshot that snap lacks
// are deleted. Files that commands created are left alone (caches).
func (s *Session) Sync(ctx context.Context, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return sandbox.SyncStats{}, err
	}
	return s.sync(ctx, c, snap)
}

func fileMode(f sandbox.File) fs.FileMode {
	if f.IsLink() {
		return 0o777
	}
	if f.Mode == 0 {
		return 0o644
	}
	return f.Mode.Perm()
}

// hash returns the content hash of f. Files read from the workspace carry
// the hash the snapshot recorded; in-memory contents (overlays, model
// edits) are hashed once and remembered while the same bytes are synced.
func (s *Session) hash(p string, f sandbox.File) string {
	data := f.Data
	if f.IsLink() || data == nil {
		return f.Hash()
	}
	if e, ok := s.hashes[p]; ok && len(e.data) == len(data) && unsafe.SliceData(e.data) == unsafe.SliceData(data) {
		return e.hash
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (s *Session) sync(ctx context.Context, c *conn, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	var st sandbox.SyncStats
	paths := snap.Paths()
	man := wire.ManifestRequest{Files: make([]wire.FileEntry, len(paths))}
	hashes := make(map[string]hashEntry, len(paths))
	for i, p := range paths {
		if _, err := sandbox.CleanRel(p); err != nil {
			return st, fmt.Errorf("sync: %w", err)
		}
		f := snap.Files[p]
		h := s.hash(p, f)
		if f.Data != nil { // files on disk carry their hash; remember only in-memory ones
			hashes[p] = hashEntry{data: f.Data, hash: h}
		}
		man.Files[i] = wire.FileEntry{Path: p, Hash: h, Mode: uint32(fileMode(f))}
	}
	stop := context.AfterFunc(ctx, func() { c.hj.Close() })
	defer stop()
	for files := man.Files; ; {
		batch := wire.ManifestRequest{Files: files[:min(len(files), wire.ManifestBatch)]}
		files = files[len(batch.Files):]
		batch.More = len(files) > 0
		if err := c.writeJSON(wire.Manifest, batch); err != nil {
			return st, s.ctxErr(ctx, s.streamErr(c, "sync", err))
		}
		if !batch.More {
			break
		}
	}
	var need wire.NeedReply
	for {
		var part wire.NeedReply
		if err := s.reply(c, wire.Need, &part); err != nil {
			return st, s.ctxErr(ctx, err)
		}
		need.Paths = append(need.Paths, part.Paths...)
		need.Deleted += part.Deleted
		if !part.More {
			break
		}
	}
	fw := &frameWriter{c: c}
	tw := tar.NewWriter(fw)
	for _, p := range need.Paths {
		f, ok := snap.Files[p]
		if !ok {
			continue
		}
		if err := writeTarEntry(tw, p, f); err != nil {
			if errors.Is(err, sandbox.ErrChanged) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				c.dead = true                          // the stream stopped mid-file: restart before the next use
				return st, fmt.Errorf("sync: %w", err) // the workspace's fault, not the sandbox's
			}
			return st, s.ctxErr(ctx, s.streamErr(c, "sync", err))
		}
	}
	// Directories get their host times last, after the files written into
	// them (see sandbox.Snapshot.DirModTimes); the supervisor sets the time
	// of those that exist and creates none.
	dirs := snap.DirModTimes()
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		if d != "." {
			if _, err := sandbox.CleanRel(d); err != nil {
				continue
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: dirs[d], Format: tar.FormatPAX}); err != nil {
			return st, s.ctxErr(ctx, s.streamErr(c, "sync", err))
		}
	}
	if err := endTar(tw, fw); err != nil {
		return st, s.ctxErr(ctx, s.streamErr(c, "sync", err))
	}
	if err := c.write(wire.TarEnd, nil); err != nil {
		return st, s.ctxErr(ctx, s.streamErr(c, "sync", err))
	}
	var done wire.SyncReply
	if err := s.reply(c, wire.Synced, &done); err != nil {
		return st, s.ctxErr(ctx, err)
	}
	s.last, s.hashes = snap, hashes
	return sandbox.SyncStats{Written: done.Written, Deleted: need.Deleted, Bytes: done.Bytes}, nil
}

// endTar writes the tar trailer and sends the last partial chunk. If
// either fails the supervisor would see a truncated archive, so the
// caller must fail the sync rather than send TarEnd.
func endTar(tw *tar.Writer, fw *frameWriter) error {
	if err := tw.Close(); err != nil {
		return fmt.Errorf("close tar stream: %w", err)
	}
	if err := fw.flush(); err != nil {
		return fmt.Errorf("send last tar chunk: %w", err)
	}
	return nil
}

// writeTarEntry adds one snapshot entry to the sync stream: a symlink as
// a symlink, a file streamed from the workspace (never read whole).
func writeTarEntry(tw *tar.Writer, p string, f sandbox.File) error {
	if f.IsLink() {
		return tw.WriteHeader(&tar.Header{Name: p, Typeflag: tar.TypeSymlink, Linkname: f.Link, Mode: 0o777, ModTime: time.Unix(0, 0)})
	}
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	// The supervisor gives the copy the host file's time (zero: now).
	hdr := &tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: int64(fileMode(f)), Size: f.Size(), ModTime: time.Unix(0, 0)}
	if mt := f.ModTime(); !mt.IsZero() {
		hdr.ModTime, hdr.Format = mt, tar.FormatPAX // PAX keeps sub-second times
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.Copy(tw, r); err != nil {
		return err
	}
	return nil
}

// ctxErr prefers the context's error when it caused the failure.
func (s *Session) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(err, sandbox.ErrClosed) {
		return fmt.Errorf("sandbox %s: %w", s.name, ctx.Err())
	}
	return err
}

// reply reads one frame of type want (decoding its JSON into v), or the
// supervisor's error.
func (s *Session) reply(c *conn, want byte, v any) error {
	f, err := wire.ReadFrame(c.r)
	if err != nil {
		return s.streamErr(c, "read reply", err)
	}
	switch f.Type {
	case want:
		if v == nil {
			return nil
		}
		if err := json.Unmarshal(f.Payload, v); err != nil {
			return s.streamErr(c, "decode reply", err)
		}
		return nil
	case wire.Error:
		return supervisorError(string(f.Payload))
	}
	return s.streamErr(c, "read reply", fmt.Errorf("unexpected frame %q", f.Type))
}

func supervisorError(msg string) error {
	if strings.Contains(msg, "no such file or directory") {
		return fmt.Errorf("sandbox: %s: %w", msg, fs.ErrNotExist)
	}
	return fmt.Errorf("sandbox: %s", msg)
}

// frameWriter cuts a byte stream into TarChunk frames.
type frameWriter struct {
	c   *conn
	buf []byte
}

func (w *frameWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), wire.ChunkSize*4-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == wire.ChunkSize*4 {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (w *frameWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.c.write(wire.TarChunk, w.buf)
	w.buf = w.buf[:0]
	return err
}

// ReadFile reads a workspace file (at most 8 MiB). A missing file's error
// wraps fs.ErrNotExist.
func (s *Session) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	clean, err := sandbox.CleanRel(rel)
	if err != nil {
		return nil, err
	}
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.hj.Close() })
	defer stop()
	if err := c.write(wire.Read, []byte(clean)); err != nil {
		return nil, s.ctxErr(ctx, s.streamErr(c, "read file", err))
	}
	f, err := wire.ReadFrame(c.r)
	if err != nil {
		return nil, s.ctxErr(ctx, s.streamErr(c, "read file", err))
	}
	switch f.Type {
	case wire.Data:
		return f.Payload, nil
	case wire.Error:
		return nil, supervisorError(string(f.Payload))
	}
	return nil, s.streamErr(c, "read file", fmt.Errorf("unexpected frame %q", f.Type))
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
	stop := context.AfterFunc(ctx, func() { c.hj.Close() })
	defer stop()
	if err := c.writeJSON(wire.Changes, wire.ChangesRequest{Skip: skip}); err != nil {
		return nil, s.ctxErr(ctx, s.streamErr(c, "changes", err))
	}
	var rep wire.ChangesReply
	if err := s.reply(c, wire.Diff, &rep); err != nil {
		return nil, s.ctxErr(ctx, err)
	}
	return &Changes{Modified: rep.Modified, Created: rep.Created, Deleted: rep.Deleted, Truncated: rep.Truncated}, nil
}

// Changes is what Session.Changes found.
type Changes struct {
	Modified  []string // synced files whose contents or mode changed
	Created   []string // regular files the last Sync did not write
	Deleted   []string // synced files that are gone
	Truncated bool     // more than 20000 paths in all; the lists are cut
}

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
		c.hj.Close()
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
