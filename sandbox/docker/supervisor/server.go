package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/wire"
)

// server holds the state of one supervisor.
type server struct {
	root     string
	self     string
	sweep    bool
	noPtrace bool // set when ptrace is refused; only the run goroutine touches it
	// traceDumpable is set when PTRACE_TRACEME is refused only because we
	// are not dumpable (gVisor checks that, Linux does not); only with
	// sweep, and only the run goroutine touches it. See startTraced.
	traceDumpable bool

	mu  sync.Mutex // guards out
	out io.Writer

	// files records what Sync wrote, so the next manifest can skip them.
	// Only the serve goroutine touches it.
	files   map[string]fileRecord
	pending []wire.FileEntry // manifest entries of frames with More set

	runMu   sync.Mutex // guards running
	running *runState

	// sync in progress (serve goroutine only)
	tarW    *io.PipeWriter
	tarDone chan syncResult
}

type fileRecord struct {
	link  string // symlink target, "" for a regular file
	hash  string
	mode  uint32
	size  int64
	mtime time.Time
}

type syncResult struct {
	reply wire.SyncReply
	err   error
}

type runState struct {
	pgid     int
	timedOut bool
	killed   bool
}

func newServer(root, self string, sweep bool, out io.Writer) *server {
	return &server{root: root, self: self, sweep: sweep, out: out, files: map[string]fileRecord{}}
}

func (s *server) send(typ byte, p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wire.Write(s.out, typ, p)
}

func (s *server) sendJSON(typ byte, v any) {
	b, _ := json.Marshal(v)
	s.send(typ, b)
}

func (s *server) sendErr(err error) { s.send(wire.Error, []byte(err.Error())) }

// serve reads frames until stdin closes.
func (s *server) serve(in io.Reader) error {
	s.send(wire.Ready, []byte(wire.Version))
	for {
		f, err := wire.ReadFrame(in)
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.kill()
				return nil
			}
			return err
		}
		switch f.Type {
		case wire.Ping:
			s.send(wire.Pong, nil)
		case wire.Run:
			var req wire.RunRequest
			if err := json.Unmarshal(f.Payload, &req); err != nil {
				s.sendErr(fmt.Errorf("decode run: %w", err))
				continue
			}
			if st := s.begin(); st != nil {
				go s.run(st, req)
			} else {
				s.sendErr(errors.New("a command is already running"))
			}
		case wire.Kill:
			s.kill()
		case wire.Manifest:
			s.manifest(f.Payload)
		case wire.TarChunk:
			if s.tarW != nil {
				s.tarW.Write(f.Payload) // an extraction error surfaces at TarEnd
			}
		case wire.TarEnd:
			s.endSync()
		case wire.Read:
			s.readFile(string(f.Payload))
		case wire.Changes:
			s.changes(f.Payload)
		default:
			s.sendErr(fmt.Errorf("unknown frame %q", f.Type))
		}
	}
}

func (s *server) begin() *runState {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.running != nil {
		return nil
	}
	s.running = &runState{}
	return s.running
}

// kill kills the running command's processes, if any.
func (s *server) kill() {
	s.runMu.Lock()
	st := s.running
	if st != nil {
		st.killed = true
	}
	s.runMu.Unlock()
	if st != nil {
		s.killGroup(st)
	}
}

func (s *server) killGroup(st *runState) {
	s.runMu.Lock()
	pgid := st.pgid
	s.runMu.Unlock()
	if pgid > 0 {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if s.sweep {
		syscall.Kill(-1, syscall.SIGKILL) // every process in the sandbox but us and init
	}
}

// workPath resolves a workspace-relative path from the host.
func (s *server) workPath(rel string) (string, error) {
	if rel == "" || rel == "." {
		return s.root, nil
	}
	if strings.ContainsRune(rel, 0) || path.IsAbs(rel) {
		return "", fmt.Errorf("invalid path %q", rel)
	}
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q is outside the workspace", rel)
	}
	return filepath.Join(s.root, filepath.FromSlash(c)), nil
}

func (s *server) readFile(rel string) {
	p, err := s.workPath(rel)
	if err != nil {
		s.sendErr(err)
		return
	}
	f, err := os.Open(p)
	if err != nil {
		s.sendErr(err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		s.sendErr(err)
		return
	}
	if !st.Mode().IsRegular() {
		s.sendErr(fmt.Errorf("%s is not a regular file", rel))
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, wire.MaxPayload+1))
	if err != nil {
		s.sendErr(err)
		return
	}
	if len(data) > wire.MaxPayload {
		s.sendErr(fmt.Errorf("%s is larger than %d bytes", rel, wire.MaxPayload))
		return
	}
	s.send(wire.Data, data)
}

// manifest compares the wanted files with what this supervisor wrote and
// left unchanged, deletes what is gone, and asks for the rest.
func (s *server) manifest(payload []byte) {
	var req wire.ManifestRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		s.pending = nil
		s.sendErr(fmt.Errorf("decode manifest: %w", err))
		return
	}
	s.pending = append(s.pending, req.Files...)
	if req.More {
		return
	}
	files := s.pending
	s.pending = nil
	want := make(map[string]bool, len(files))
	reply := wire.NeedReply{Paths: []string{}}
	for _, f := range files {
		want[f.Path] = true
		if rec, ok := s.files[f.Path]; ok && rec.hash == f.Hash && rec.mode == f.Mode && s.unchanged(f.Path, rec) {
			continue
		}
		reply.Paths = append(reply.Paths, f.Path)
	}
	for p := range s.files {
		if want[p] {
			continue
		}
		delete(s.files, p)
		if fp, err := s.workPath(p); err == nil && os.Remove(fp) == nil {
			reply.Deleted++
		}
	}
	pr, pw := io.Pipe()
	s.tarW = pw
	s.tarDone = make(chan syncResult, 1)
	go func() {
		rep, err := s.extract(pr)
		pr.CloseWithError(err)
		io.Copy(io.Discard, pr)
		s.tarDone <- syncResult{rep, err}
	}()
	for len(reply.Paths) > wire.ManifestBatch {
		s.sendJSON(wire.Need, wire.NeedReply{Paths: reply.Paths[:wire.ManifestBatch], More: true})
		reply.Paths = reply.Paths[wire.ManifestBatch:]
	}
	s.sendJSON(wire.Need, reply)
}

func (s *server) unchanged(rel string, rec fileRecord) bool {
	p, err := s.workPath(rel)
	if err != nil {
		return false
	}
	st, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if rec.link != "" {
		t, err := os.Readlink(p)
		return err == nil && st.Mode()&fs.ModeSymlink != 0 && t == rec.link
	}
	return st.Mode().IsRegular() && st.Size() == rec.size && st.ModTime().Equal(rec.mtime)
}

func (s *server) endSync() {
	if s.tarW == nil {
		s.sendErr(errors.New("tar end without manifest"))
		return
	}
	s.tarW.Close()
	res := <-s.tarDone
	s.tarW, s.tarDone = nil, nil
	if res.err != nil {
		s.sendErr(res.err)
		return
	}
	s.sendJSON(wire.Synced, res.reply)
}

// extract writes the regular files of a tar stream into the workspace.
// It runs on its own goroutine between a manifest and the end of its tar
// stream; serve only feeds it TarChunk frames meanwhile and touches
// s.files again after endSync has waited for it.
func (s *server) extract(r io.Reader) (wire.SyncReply, error) {
	var rep wire.SyncReply
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return rep, nil
		}
		if err != nil {
			return rep, fmt.Errorf("read tar: %w", err)
		}
		var rec fileRecord
		switch h.Typeflag {
		case tar.TypeDir:
			if err := s.dirTime(h); err != nil {
				return rep, err
			}
			continue
		case tar.TypeReg:
			rec, err = s.writeFile(h, tr)
		case tar.TypeSymlink:
			rec, err = s.writeLink(h)
		default:
			return rep, fmt.Errorf("tar entry %s: only regular files and symlinks are accepted", h.Name)
		}
		if err != nil {
			return rep, err
		}
		s.files[path.Clean(h.Name)] = rec
		rep.Written++
		rep.Bytes += rec.size
	}
}

// dirTime gives an existing directory of the workspace the host's time;
// it creates none, and leaves anything that is not a directory (a command
// may have put a symlink there) alone.
func (s *server) dirTime(h *tar.Header) error {
	name := strings.TrimSuffix(h.Name, "/")
	p := s.root
	if name != "." {
		var err error
		if p, err = s.workPath(name); err != nil || p == s.root {
			return fmt.Errorf("tar entry %q: bad path", h.Name)
		}
	}
	st, err := os.Lstat(p)
	if err != nil || !st.IsDir() || !h.ModTime.After(time.Unix(0, 0)) {
		return nil
	}
	if err := os.Chtimes(p, h.ModTime, h.ModTime); err != nil {
		return fmt.Errorf("time of %s: %w", name, err)
	}
	return nil
}

func (s *server) writeFile(h *tar.Header, r io.Reader) (fileRecord, error) {
	p, err := s.workPath(h.Name)
	if err != nil || p == s.root {
		return fileRecord{}, fmt.Errorf("tar entry %q: bad path", h.Name)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fileRecord{}, fmt.Errorf("write %s: %w", h.Name, err)
	}
	// Never write through whatever a command left at this path (a symlink).
	if err := os.RemoveAll(p); err != nil {
		return fileRecord{}, fmt.Errorf("write %s: %w", h.Name, err)
	}
	mode := fs.FileMode(h.Mode).Perm()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return fileRecord{}, fmt.Errorf("write %s: %w", h.Name, err)
	}
	hash := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, hash), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(p, mode) // umask may have cleared bits
	}
	// The host file's modification time (the Unix epoch: none, keep now),
	// so that tools keyed on times (Go's test cache) see an unchanged file
	// as unchanged across sessions.
	if err == nil && h.ModTime.After(time.Unix(0, 0)) {
		err = os.Chtimes(p, h.ModTime, h.ModTime)
	}
	if err != nil {
		return fileRecord{}, fmt.Errorf("write %s: %w", h.Name, err)
	}
	st, err := os.Lstat(p)
	if err != nil {
		return fileRecord{}, fmt.Errorf("write %s: %w", h.Name, err)
	}
	return fileRecord{hash: hex.EncodeToString(hash.Sum(nil)), mode: uint32(mode), size: n, mtime: st.ModTime()}, nil
}

// writeLink creates a symlink whose target, relative, stays inside the
// workspace (the host keeps only such links; anything else is refused).
func (s *server) writeLink(h *tar.Header) (fileRecord, error) {
	p, err := s.workPath(h.Name)
	if err != nil || p == s.root {
		return fileRecord{}, fmt.Errorf("tar entry %q: bad path", h.Name)
	}
	t := h.Linkname
	j := path.Join(path.Dir(path.Clean(h.Name)), t)
	if t == "" || path.IsAbs(t) || strings.ContainsRune(t, 0) || j == ".." || strings.HasPrefix(j, "../") {
		return fileRecord{}, fmt.Errorf("tar entry %q: symlink target %q leaves the workspace", h.Name, t)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fileRecord{}, fmt.Errorf("write %s: %w", h.Name, err)
	}
	if err := os.RemoveAll(p); err != nil {
		return fileRecord{}, fmt.Errorf("write %s: %w", h.Name, err)
	}
	if err := os.Symlink(t, p); err != nil {
		return fileRecord{}, fmt.Errorf("write %s: %w", h.Name, err)
	}
	sum := sha256.Sum256([]byte("link:" + t))
	return fileRecord{link: t, hash: hex.EncodeToString(sum[:]), mode: 0o777, size: int64(len(t))}, nil
}

// capWriter forwards a stream in frames until its cap, then adds a marker
// once and discards the rest.
type capWriter struct {
	s         *server
	typ       byte
	remaining int64
	limit     int64
	truncated bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	n := len(p)
	if w.truncated {
		return n, nil
	}
	if w.limit > 0 && int64(len(p)) > w.remaining {
		p = p[:w.remaining]
		w.truncated = true
	}
	if len(p) > 0 {
		w.s.send(w.typ, p) // send writes before returning: no copy needed
		w.remaining -= int64(len(p))
	}
	if w.truncated {
		w.s.send(w.typ, []byte(wire.TruncationMarker(w.limit)))
	}
	return n, nil
}

// changes compares the workspace with what the last sync wrote. A synced
// file counts as modified only when its contents hash differently (a
// rewrite with the same bytes is no change).
func (s *server) changes(payload []byte) {
	var req wire.ChangesRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		s.sendErr(fmt.Errorf("decode changes: %w", err))
		return
	}
	rep := wire.ChangesReply{Modified: []string{}, Created: []string{}, Deleted: []string{}}
	seen := map[string]bool{}
	n := 0
	add := func(list *[]string, p string) {
		if n >= wire.MaxChanges {
			rep.Truncated = true
			return
		}
		n++
		*list = append(*list, p)
	}
	filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != s.root && slices.Contains(req.Skip, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		rec, ok := s.files[rel]
		if d.Type()&fs.ModeSymlink != 0 { // only the links a sync made are tracked
			if ok && rec.link != "" {
				seen[rel] = true
				if !s.unchanged(rel, rec) {
					add(&rep.Modified, rel)
				}
			}
			return nil
		}
		if !ok {
			add(&rep.Created, rel)
			return nil
		}
		seen[rel] = true
		if s.unchanged(rel, rec) {
			return nil
		}
		info, err := d.Info()
		if err != nil || uint32(info.Mode().Perm()) != rec.mode || hashFile(p) != rec.hash {
			add(&rep.Modified, rel)
		}
		return nil
	})
	for p := range s.files {
		if !seen[p] {
			add(&rep.Deleted, p)
		}
	}
	sort.Strings(rep.Deleted)
	s.sendJSON(wire.Diff, rep)
}

func hashFile(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
