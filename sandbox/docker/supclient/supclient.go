// Package supclient is the host side of the sandbox supervisor's framed
// protocol (sandbox/docker/internal/wire) over any byte stream: a
// container's attached stdin/stdout (docker) or one long-lived exec stream
// into a pod (kubernetes).
//
// The main type is [Conn]. One request is in flight at a time: a Conn is
// used by one goroutine at a time, except [Conn.Close], which may be called
// concurrently to abort. A stream that failed is dead ([Conn.Dead]); the
// caller replaces its sandbox.
package supclient

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
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/wire"
)

// ErrStream is wrapped by errors of a stream that failed: the supervisor
// (or the transport to it) is gone and the Conn is dead.
var ErrStream = errors.New("supervisor stream failed")

// ErrNotStarted is wrapped (with ErrStream) by AwaitReady's error when
// the stream ended or spoke another wire version before Ready: the
// supervisor never started (a half-filled volume, a wrong binary), as
// opposed to a timeout or a cancelled context.
var ErrNotStarted = errors.New("sandbox supervisor did not start")

// Conn is one framed stream to one supervisor.
type Conn struct {
	// KeepRootTime makes Sync leave the workspace root's modification
	// time alone: where the root is not the sandbox user's (a Kubernetes
	// emptyDir is root's), setting it fails with EPERM. Set before use.
	KeepRootTime bool

	// Log, when set, gets debug records of what the supervisor reports
	// beside a command's result (processes its kill sweep ended). Set
	// before use.
	Log *slog.Logger

	r     io.Reader
	w     io.Writer
	close func()

	wmu  sync.Mutex // serialises frames written to w
	dead atomic.Bool

	closeOnce sync.Once
}

// New returns a Conn reading frames from r and writing them to w. close
// tears the transport down (it must make a blocked read of r return); it
// is called at most once.
func New(r io.Reader, w io.Writer, close func()) *Conn {
	return &Conn{r: r, w: w, close: close}
}

// Dead reports whether the stream failed or was closed.
func (c *Conn) Dead() bool { return c.dead.Load() }

// Close tears the stream down; a running request returns an error.
func (c *Conn) Close() {
	c.dead.Store(true)
	c.closeOnce.Do(c.close)
}

func (c *Conn) write(typ byte, p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return wire.Write(c.w, typ, p)
}

func (c *Conn) writeJSON(typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.write(typ, b)
}

// fail marks the stream dead and wraps err.
func (c *Conn) fail(what string, err error) error {
	c.dead.Store(true)
	return fmt.Errorf("%s: %w: %w", what, ErrStream, err)
}

func (c *Conn) notStarted(err error) error {
	c.dead.Store(true)
	return fmt.Errorf("%w: %w: %w", ErrNotStarted, ErrStream, err)
}

// AwaitReady waits for the supervisor's Ready frame, which must name this
// build's wire version, for at most timeout.
func (c *Conn) AwaitReady(ctx context.Context, timeout time.Duration) error {
	ready := make(chan error, 1)
	go func() {
		f, err := wire.ReadFrame(c.r)
		switch {
		case err != nil:
			ready <- c.notStarted(err)
		case f.Type != wire.Ready || string(f.Payload) != wire.Version:
			ready <- c.notStarted(fmt.Errorf("it speaks %q, want %q", f.Payload, wire.Version))
		default:
			ready <- nil
		}
	}()
	select {
	case err := <-ready:
		return err
	case <-ctx.Done():
		c.Close()
		return ctx.Err()
	case <-time.After(timeout):
		c.Close()
		return fmt.Errorf("supervisor did not answer within %v", timeout)
	}
}

// Defaults fills the zero fields of l with the sandbox defaults.
func Defaults(l sandbox.Limits) sandbox.Limits {
	if l.Timeout <= 0 {
		l.Timeout = 60 * time.Second
	}
	if l.CPUTime <= 0 {
		l.CPUTime = l.Timeout
	}
	if l.Memory <= 0 {
		l.Memory = 1 << 30
	}
	if l.Pids <= 0 {
		l.Pids = 256
	}
	if l.OutputCap <= 0 {
		l.OutputCap = 1 << 20
	}
	if l.FileSize <= 0 {
		l.FileSize = 256 << 20
	}
	if l.NoFile <= 0 {
		l.NoFile = 1024
	}
	if l.NanoCPUs <= 0 {
		l.NanoCPUs = 2e9
	}
	return l
}

// DefaultPath is the PATH commands get when their image sets none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// SpecEnv adds spec.Env to env (a later KEY replaces an earlier one) and
// puts spec.Path before PATH (DefaultPath when env has none). env is not
// modified.
func SpecEnv(env []string, spec sandbox.Spec) []string {
	out := append([]string(nil), env...)
	set := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		for i, e := range out {
			if strings.HasPrefix(e, k+"=") {
				out[i] = kv
				return
			}
		}
		out = append(out, kv)
	}
	for _, kv := range spec.Env {
		set(kv)
	}
	if len(spec.Path) > 0 {
		p := DefaultPath
		for _, e := range out {
			if v, ok := strings.CutPrefix(e, "PATH="); ok {
				p = v
			}
		}
		set("PATH=" + strings.Join(spec.Path, ":") + ":" + p)
	}
	return out
}

// Merge fills the zero fields of a command's limits l from the session's
// def. Memory, Pids and NanoCPUs bound the whole sandbox: def's hold.
func Merge(l, def sandbox.Limits) sandbox.Limits {
	if l.Timeout <= 0 {
		l.Timeout = def.Timeout
		if l.CPUTime <= 0 {
			l.CPUTime = def.CPUTime
		}
	}
	if l.CPUTime <= 0 {
		l.CPUTime = l.Timeout
	}
	if l.OutputCap <= 0 {
		l.OutputCap = def.OutputCap
	}
	if l.FileSize <= 0 {
		l.FileSize = def.FileSize
	}
	if l.NoFile <= 0 {
		l.NoFile = def.NoFile
	}
	l.Memory, l.Pids, l.NanoCPUs = def.Memory, def.Pids, def.NanoCPUs
	return l
}

// Run runs cmd with the full environment env and the (merged) limits l.
// Output streams to cmd's writers as it arrives. Cancelling ctx asks the
// supervisor to kill the command; if it does not finish within 5 s the
// stream is closed. A stream that breaks mid-command returns an error
// wrapping ErrStream together with a non-nil Result holding the output
// that arrived before the break (the caller decides whether the sandbox
// was killed, for example for memory, and whether to report that result).
func (c *Conn) Run(ctx context.Context, cmd sandbox.Command, env []string, l sandbox.Limits) (*sandbox.Result, error) {
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
	req := wire.RunRequest{
		Args:      cmd.Args,
		Dir:       dir,
		Env:       append(append([]string(nil), env...), cmd.Env...),
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
		req.OutputCap = 0 // everything comes here; the cap is applied on this side
	}
	if err := c.writeJSON(wire.Run, req); err != nil {
		return nil, c.fail("run", err)
	}
	// On cancel, ask the supervisor to kill; if it does not finish the
	// command within a grace period, drop the stream (and the sandbox).
	finished := make(chan struct{})
	defer close(finished)
	stop := context.AfterFunc(ctx, func() {
		c.write(wire.Kill, nil)
		select {
		case <-finished:
		case <-time.After(5 * time.Second):
			c.Close()
		}
	})
	defer stop()

	res := &sandbox.Result{}
	capBuf := l.OutputCap + int64(len(wire.TruncationMarker(l.OutputCap)))
	for {
		f, err := wire.ReadFrame(c.r)
		if err != nil {
			if ctx.Err() != nil {
				c.dead.Store(true)
				return nil, ctx.Err()
			}
			return res, c.fail("run", err) // the output so far, for the caller's post-mortem
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
				return nil, c.fail("run", err)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.ExitCode, res.TimedOut, res.OOMKilled = st.Code, st.TimedOut, st.OOMKilled
			res.Truncated = st.Truncated || outCap.truncated || errCap.truncated
			res.Duration = time.Duration(st.DurationNS)
			if st.Leftover > 0 && c.Log != nil {
				c.Log.Debug("killed processes left behind", "count", st.Leftover)
			}
			return res, nil
		case wire.Error:
			return nil, fmt.Errorf("sandbox run %s: %w", cmd.Args[0], supervisorError(string(f.Payload)))
		default:
			return nil, c.fail("run", fmt.Errorf("unexpected frame %q", f.Type))
		}
	}
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

func supervisorError(msg string) error {
	if strings.Contains(msg, "no such file or directory") {
		return fmt.Errorf("sandbox: %s: %w", msg, fs.ErrNotExist)
	}
	return fmt.Errorf("sandbox: %s", msg)
}

// reply reads one frame of type want (decoding its JSON into v), or the
// supervisor's error.
func (c *Conn) reply(want byte, v any) error {
	f, err := wire.ReadFrame(c.r)
	if err != nil {
		return c.fail("read reply", err)
	}
	switch f.Type {
	case want:
		if v == nil {
			return nil
		}
		if err := json.Unmarshal(f.Payload, v); err != nil {
			return c.fail("decode reply", err)
		}
		return nil
	case wire.Error:
		return supervisorError(string(f.Payload))
	}
	return c.fail("read reply", fmt.Errorf("unexpected frame %q", f.Type))
}

// ReadFile reads a workspace file (at most 8 MiB). A missing file's error
// wraps fs.ErrNotExist.
func (c *Conn) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	clean, err := sandbox.CleanRel(rel)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	if err := c.write(wire.Read, []byte(clean)); err != nil {
		return nil, ctxErr(ctx, c.fail("read file", err))
	}
	f, err := wire.ReadFrame(c.r)
	if err != nil {
		return nil, ctxErr(ctx, c.fail("read file", err))
	}
	switch f.Type {
	case wire.Data:
		return f.Payload, nil
	case wire.Error:
		return nil, supervisorError(string(f.Payload))
	}
	return nil, c.fail("read file", fmt.Errorf("unexpected frame %q", f.Type))
}

// Changes is how the sandbox workspace differs from the last Sync.
type Changes struct {
	Modified  []string // synced files whose contents or mode changed
	Created   []string // regular files the last Sync did not write
	Deleted   []string // synced files that are gone
	Truncated bool     // more than 20000 paths in all; the lists are cut
}

// Changes lists how the workspace differs from the last Sync; directories
// named in skip are not entered.
func (c *Conn) Changes(ctx context.Context, skip ...string) (*Changes, error) {
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	if err := c.writeJSON(wire.Changes, wire.ChangesRequest{Skip: skip}); err != nil {
		return nil, ctxErr(ctx, c.fail("changes", err))
	}
	var rep wire.ChangesReply
	if err := c.reply(wire.Diff, &rep); err != nil {
		return nil, ctxErr(ctx, err)
	}
	return &Changes{Modified: rep.Modified, Created: rep.Created, Deleted: rep.Deleted, Truncated: rep.Truncated}, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

// Hashes remembers the content hashes of in-memory files (model edits,
// overlays) a Sync sent, so the next Sync of the same bytes does not hash
// them again. The zero value is empty and usable.
type Hashes struct {
	m map[string]hashEntry
}

type hashEntry struct {
	data []byte // the hashed slice, kept so its address stays unique
	hash string
}

func (h *Hashes) hash(p string, f sandbox.File) string {
	data := f.Data
	if f.IsLink() || data == nil {
		return f.Hash()
	}
	if e, ok := h.m[p]; ok && len(e.data) == len(data) && unsafe.SliceData(e.data) == unsafe.SliceData(data) {
		return e.hash
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
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

// Sync makes the workspace equal to snap for every file snap holds,
// sending only what the supervisor lacks, and deletes files of the
// previous snapshot that snap lacks. On success h holds snap's hashes.
// An error from the workspace's side (a file changed or vanished while
// read) does not wrap ErrStream, but the stream is dead all the same.
func (c *Conn) Sync(ctx context.Context, snap *sandbox.Snapshot, h *Hashes) (sandbox.SyncStats, error) {
	var st sandbox.SyncStats
	paths := snap.Paths()
	man := wire.ManifestRequest{Files: make([]wire.FileEntry, len(paths))}
	hashes := make(map[string]hashEntry, len(paths))
	for i, p := range paths {
		if _, err := sandbox.CleanRel(p); err != nil {
			return st, fmt.Errorf("sync: %w", err)
		}
		f := snap.Files[p]
		sum := h.hash(p, f)
		if f.Data != nil { // files on disk carry their hash; remember only in-memory ones
			hashes[p] = hashEntry{data: f.Data, hash: sum}
		}
		man.Files[i] = wire.FileEntry{Path: p, Hash: sum, Mode: uint32(fileMode(f))}
	}
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	for files := man.Files; ; {
		batch := wire.ManifestRequest{Files: files[:min(len(files), wire.ManifestBatch)]}
		files = files[len(batch.Files):]
		batch.More = len(files) > 0
		if err := c.writeJSON(wire.Manifest, batch); err != nil {
			return st, ctxErr(ctx, c.fail("sync", err))
		}
		if !batch.More {
			break
		}
	}
	var need wire.NeedReply
	for {
		var part wire.NeedReply
		if err := c.reply(wire.Need, &part); err != nil {
			return st, ctxErr(ctx, err)
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
				c.dead.Store(true)                     // the stream stopped mid-file: replace before the next use
				return st, fmt.Errorf("sync: %w", err) // the workspace's fault, not the sandbox's
			}
			return st, ctxErr(ctx, c.fail("sync", err))
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
		if d == "." && c.KeepRootTime {
			continue
		}
		if d != "." {
			if _, err := sandbox.CleanRel(d); err != nil {
				continue
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: dirs[d], Format: tar.FormatPAX}); err != nil {
			return st, ctxErr(ctx, c.fail("sync", err))
		}
	}
	if err := endTar(tw, fw); err != nil {
		return st, ctxErr(ctx, c.fail("sync", err))
	}
	if err := c.write(wire.TarEnd, nil); err != nil {
		return st, ctxErr(ctx, c.fail("sync", err))
	}
	var done wire.SyncReply
	if err := c.reply(wire.Synced, &done); err != nil {
		return st, ctxErr(ctx, err)
	}
	h.m = hashes
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
	hdr := &tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: int64(fileMode(f)), Size: f.Size(), ModTime: time.Unix(0, 0)}
	if mt := f.ModTime(); !mt.IsZero() {
		hdr.ModTime, hdr.Format = mt, tar.FormatPAX
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, r)
	return err
}

// frameWriter cuts a byte stream into TarChunk frames.
type frameWriter struct {
	c   *Conn
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
