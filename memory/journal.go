package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/fixpoint-dev/fixpoint/flock"
)

// The journal is the store's source of truth: an append-only file of lines
//
//	<crc32c of JSON, 8 hex digits> <JSON entry>\n
//
// A line is committed once its write and fsync returned. A writer killed
// mid-write leaves at most one torn line at the end of the file: it has no
// newline (readers stop before it) or, once the next writer has terminated
// it, a bad checksum (readers skip it and report it). Nothing before it is
// ever rewritten in place: compaction writes a new file and renames it over
// the old one, then fsyncs the directory.
//
// Writers hold an exclusive flock on the lock file (not on the journal,
// which compaction replaces); readers hold a shared one while they read.

const (
	journalName = "journal.jsonl"
	lockName    = "lock"
	metaName    = "meta.json"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// entry is one journal line.
type entry struct {
	// Op is "put" (add or replace a record), "del" (remove IDs) or "clear".
	Op  string   `json:"op"`
	Rec *Record  `json:"rec,omitempty"`
	IDs []string `json:"ids,omitempty"`
	// Emb and Vec carry the record's vector when it came from a remote
	// embedder (expensive to recompute); local vectors are recomputed.
	Emb string    `json:"emb,omitempty"`
	Vec []float32 `json:"vec,omitempty"`
}

// encodeEntry returns the journal line for e, newline included.
func encodeEntry(e *entry) ([]byte, error) {
	js, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode journal entry: %w", err)
	}
	line := make([]byte, 0, len(js)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(js, crcTable))
	line = append(line, js...)
	return append(line, '\n'), nil
}

// decodeLine parses one line (without its newline).
func decodeLine(line []byte) (*entry, error) {
	if len(line) < 10 || line[8] != ' ' {
		return nil, errors.New("malformed line")
	}
	var sum uint32
	if _, err := fmt.Sscanf(string(line[:8]), "%08x", &sum); err != nil {
		return nil, errors.New("malformed checksum")
	}
	js := line[9:]
	if crc32.Checksum(js, crcTable) != sum {
		return nil, errors.New("checksum mismatch")
	}
	var e entry
	if err := json.Unmarshal(js, &e); err != nil {
		return nil, fmt.Errorf("bad entry: %w", err)
	}
	return &e, nil
}

// Corrupt describes a journal line that was skipped.
type Corrupt struct {
	Offset int64  // byte offset of the line in the journal
	Reason string // e.g. "checksum mismatch"
}

// readJournal reads complete lines of f from offset and calls fn for each
// valid entry, in order. It returns the offset after the last complete line
// (a torn tail without newline is left for later) and the lines it skipped.
// Lines are decoded on every CPU: JSON decoding dominates opening a large
// store.
func readJournal(f *os.File, offset int64, fn func(*entry)) (int64, []Corrupt, error) {
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, nil, fmt.Errorf("seek journal: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return offset, nil, fmt.Errorf("read journal: %w", err)
	}
	end := bytes.LastIndexByte(data, '\n') + 1
	data = data[:end]
	type line struct {
		off  int64
		body []byte
		e    *entry
		err  error
	}
	var lines []line
	for pos := 0; pos < len(data); {
		n := bytes.IndexByte(data[pos:], '\n')
		if body := data[pos : pos+n]; len(body) > 0 {
			lines = append(lines, line{off: offset + int64(pos), body: body})
		}
		pos += n + 1
	}
	decode := func(ls []line) {
		for i := range ls {
			ls[i].e, ls[i].err = decodeLine(ls[i].body)
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if len(lines) < 256 || workers == 1 {
		decode(lines)
	} else {
		var wg sync.WaitGroup
		chunk := (len(lines) + workers - 1) / workers
		for lo := 0; lo < len(lines); lo += chunk {
			wg.Add(1)
			go func(ls []line) { defer wg.Done(); decode(ls) }(lines[lo:min(lo+chunk, len(lines))])
		}
		wg.Wait()
	}
	var bad []Corrupt
	for _, l := range lines {
		if l.err != nil {
			bad = append(bad, Corrupt{Offset: l.off, Reason: l.err.Error()})
			continue
		}
		fn(l.e)
	}
	return offset + int64(end), bad, nil
}

// appendEntries writes lines to the journal at path and fsyncs it. The
// caller holds the write lock. If the file ends in a torn line (a killed
// writer), a newline is written first so that the torn line stays a line of
// its own. On failure the file is truncated back to its previous size.
func appendEntries(path string, lines []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open journal: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat journal: %w", err)
	}
	size := st.Size()
	if size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return fmt.Errorf("read journal tail: %w", err)
		}
		if last[0] != '\n' {
			lines = append([]byte{'\n'}, lines...)
		}
	}
	if _, err := f.WriteAt(lines, size); err != nil {
		_ = f.Truncate(size)
		return fmt.Errorf("append to journal: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Truncate(size)
		return fmt.Errorf("sync journal: %w", err)
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file, fsync and
// rename, then fsyncs the directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Memory directories are 0700 and their files 0600: records hold failure
// output and diffs of private code.
const (
	dirMode  = 0o700
	fileMode = 0o600
)

// makePrivateDir creates dir (mode 0700) if needed and tightens an existing
// one, and the files in it, that an older version created group- or
// world-readable. It fails only when dir cannot be created; tightening is
// best effort (a read-only store belongs to someone else).
func makePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o077 != 0 {
		_ = os.Chmod(dir, dirMode)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && info.Mode().Perm()&0o077 != 0 {
			_ = os.Chmod(filepath.Join(dir, e.Name()), fileMode)
		}
	}
	return nil
}

// fileLock is an flock on a file that is never replaced.
type fileLock struct{ f *os.File }

// openLock opens (creating if it can) the lock file in dir. When the
// directory is read-only it falls back to opening an existing file
// read-only, which is enough for shared locks.
func openLock(dir string) (*fileLock, bool, error) {
	p := filepath.Join(dir, lockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		return &fileLock{f}, true, nil
	}
	f, rerr := os.Open(p)
	if rerr != nil {
		return nil, false, err
	}
	return &fileLock{f}, false, nil
}

func (l *fileLock) lock(exclusive bool) error {
	if exclusive {
		return flock.Exclusive(l.f)
	}
	return flock.Shared(l.f)
}

func (l *fileLock) unlock() { _ = flock.Unlock(l.f) }

func (l *fileLock) close() error { return l.f.Close() }
