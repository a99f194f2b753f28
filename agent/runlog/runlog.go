// Package runlog writes and reads the per-run JSON-lines logs kept under
// <DataDir>/runs/<run-id>.jsonl.
//
// A [Writer] appends [Entry] lines (prompts, replies, edits, test results,
// timings); [List] summarises the runs of a directory and [Read] loads one
// run. Every string of every entry passes through the writer's redactor
// before it reaches the disk. Logs are 0600 files in a 0700 directory, and
// bounded: each string is clipped (Options.MaxString) and the file stops
// at Options.MaxBytes with a KindTruncated marker (the result is always
// written).
package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Entry kinds written by the agent.
const (
	KindStart     = "start"     // Data: Start
	KindPrompt    = "prompt"    // Data: {"role","size","content"}
	KindReply     = "reply"     // Data: {"content","tokens_in","tokens_out","model_ms"}
	KindEdit      = "edit"      // Data: {"blocks","applied","error"}
	KindTest      = "test"      // Data: a test report
	KindMemory    = "memory"    // Data: {"shown":[ids],"added":[ids]}
	KindIteration = "iteration" // Data: an agent.Iteration
	KindResult    = "result"    // Data: the agent.Result (diff included)
	KindWarning   = "warning"   // Data: {"message"}
	// KindTruncated is written once, when the log reached Options.MaxBytes:
	// later entries are dropped, except the result. Data: {"message","bytes"}.
	KindTruncated = "truncated"
)

// Default bounds of a run log (see Options).
const (
	DefaultMaxBytes  = 64 << 20
	DefaultMaxString = 1 << 20
)

// Entry is one line of a run log.
type Entry struct {
	Time      time.Time       `json:"t"`
	Kind      string          `json:"kind"`
	Iteration int             `json:"iter,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// Start is the data of the first entry of a run.
type Start struct {
	RunID string    `json:"run_id"`
	Mode  string    `json:"mode"`
	Goal  string    `json:"goal,omitempty"`
	Root  string    `json:"root"`
	Model string    `json:"model,omitempty"`
	Time  time.Time `json:"time"`
}

// Options configure a Writer. Zero values are documented defaults.
type Options struct {
	// Redact masks secrets in every string of an entry (keys and values
	// of its JSON, decoded: a value is matched as the program saw it, not
	// JSON-escaped); nil writes entries unchanged.
	Redact func(string) string
	// MaxBytes bounds the log file: past it one KindTruncated entry is
	// written and later entries are dropped, except the KindResult entry,
	// which is always written (each of its strings clipped to MaxBytes), so
	// history still shows how the run ended and its diff. 0 means
	// DefaultMaxBytes.
	MaxBytes int64
	// MaxString clips every string of an entry to its first MaxString
	// bytes and a marker saying how many were left out ("…[fixpoint: N
	// more bytes not logged]"): a 50 MB reply is not logged whole, nor
	// twice. 0 means DefaultMaxString.
	MaxString int
}

// Writer appends entries to one run log. It is safe for concurrent use.
type Writer struct {
	mu        sync.Mutex // guards f, err, written and truncated
	f         *os.File
	path      string
	redact    func(string) string
	maxBytes  int64
	maxString int
	err       error // first write error; later writes are dropped
	written   int64 // bytes in the file
	truncated bool  // the KindTruncated entry is written
}

// Create creates dir (if needed, mode 0700; an existing dir is set to
// 0700) and the log file <dir>/<runID>.jsonl (mode 0600).
func Create(dir, runID string, opts *Options) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create run log dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("restrict run log dir %s to its owner: %w", dir, err)
	}
	p := filepath.Join(dir, runID+".jsonl")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create run log: %w", err)
	}
	w := &Writer{f: f, path: p, maxBytes: DefaultMaxBytes, maxString: DefaultMaxString}
	if opts != nil {
		w.redact = opts.Redact
		if opts.MaxBytes > 0 {
			w.maxBytes = opts.MaxBytes
		}
		if opts.MaxString > 0 {
			w.maxString = opts.MaxString
		}
	}
	return w, nil
}

// Path is the log file's path.
func (w *Writer) Path() string { return w.path }

// Write appends one entry. A nil Writer discards. The first error is
// returned and remembered; later writes return it again without writing.
func (w *Writer) Write(kind string, iter int, data any) error {
	if w == nil {
		return nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s entry: %w", kind, err)
	}
	// Redact first, then clip: a secret cut in two is already masked. The
	// result's strings may be as long as the whole log (its diff is what
	// the user is told to find there).
	maxString := w.maxString
	if kind == KindResult {
		maxString = int(min(w.maxBytes, int64(math.MaxInt32)))
	}
	if w.redact != nil || len(raw) > maxString {
		if raw, err = rewriteJSON(raw, w.redact, maxString); err != nil {
			return fmt.Errorf("redact %s entry: %w", kind, err)
		}
	}
	line, err := json.Marshal(Entry{Time: time.Now().UTC(), Kind: kind, Iteration: iter, Data: raw})
	if err != nil {
		return fmt.Errorf("encode %s entry: %w", kind, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if kind != KindResult && w.written+int64(len(line))+1 > w.maxBytes {
		if w.truncated {
			return nil
		}
		w.truncated = true
		marker, _ := json.Marshal(Entry{Time: time.Now().UTC(), Kind: KindTruncated, Iteration: iter,
			Data: json.RawMessage(fmt.Sprintf(`{"message":"the run log reached its cap of %d bytes: later entries are not logged (the result still is)","bytes":%d}`, w.maxBytes, w.written))})
		line = marker
	}
	n, err := w.f.Write(append(line, '\n'))
	w.written += int64(n)
	if err != nil {
		w.err = fmt.Errorf("write run log: %w", err)
		return w.err
	}
	return nil
}

// rewriteJSON applies redact (when not nil) to every string (object keys
// included) of a JSON document, then clips each string to maxString
// bytes. Numbers keep their text.
func rewriteJSON(raw []byte, redact func(string) string, maxString int) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	fix := func(s string) string {
		if redact != nil {
			s = redact(s)
		}
		return clip(s, maxString)
	}
	return json.Marshal(rewriteValue(v, fix))
}

func rewriteValue(v any, fix func(string) string) any {
	switch x := v.(type) {
	case string:
		return fix(x)
	case []any:
		for i := range x {
			x[i] = rewriteValue(x[i], fix)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fix(k)] = rewriteValue(e, fix)
		}
		return out
	}
	return v
}

// clip returns s cut to at most n bytes (on a rune boundary) and a marker
// naming how many bytes were left out; s itself when it fits.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…[fixpoint: %d more bytes not logged]", len(s)-cut)
}

// Close closes the file. A nil Writer is fine.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Close()
}

// Summary describes one run for a listing.
type Summary struct {
	RunID      string    `json:"run_id"`
	Mode       string    `json:"mode"`
	Goal       string    `json:"goal,omitempty"`
	Root       string    `json:"root"`
	Time       time.Time `json:"time"`
	Verified   bool      `json:"verified"`
	StopReason string    `json:"stop_reason"` // "" while running or when the run crashed
	Iterations int       `json:"iterations"`
	Path       string    `json:"path"`
}

// ErrNotFound means no run log matches an id.
var ErrNotFound = errors.New("run not found")

// List summarises every run log in dir, newest first. A missing dir is an
// empty list. Unreadable lines are skipped.
func List(dir string) ([]Summary, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var out []Summary
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		entries, err := readFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, Summarize(strings.TrimSuffix(e.Name(), ".jsonl"), filepath.Join(dir, e.Name()), entries))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out, nil
}

// Summarize builds a Summary from a run's entries.
func Summarize(id, path string, entries []Entry) Summary {
	s := Summary{RunID: id, Path: path}
	for _, e := range entries {
		switch e.Kind {
		case KindStart:
			var st Start
			if json.Unmarshal(e.Data, &st) == nil {
				s.Mode, s.Goal, s.Root, s.Time = st.Mode, st.Goal, st.Root, st.Time
			}
		case KindIteration:
			s.Iterations++
		case KindResult:
			var r struct {
				Verified   bool   `json:"verified"`
				StopReason string `json:"stop_reason"`
			}
			if json.Unmarshal(e.Data, &r) == nil {
				s.Verified, s.StopReason = r.Verified, r.StopReason
			}
		}
	}
	if s.Time.IsZero() && len(entries) > 0 {
		s.Time = entries[0].Time
	}
	return s
}

// Read loads one run's entries. id may be a unique prefix of a run id.
func Read(dir, id string) (string, []Entry, error) {
	if id == "" || strings.ContainsAny(id, `/\`) {
		return "", nil, fmt.Errorf("run %q: %w", id, ErrNotFound)
	}
	p := filepath.Join(dir, id+".jsonl")
	if _, err := os.Stat(p); err != nil {
		matches, _ := filepath.Glob(filepath.Join(dir, id+"*.jsonl"))
		switch {
		case len(matches) == 0:
			return "", nil, fmt.Errorf("run %q: %w", id, ErrNotFound)
		case len(matches) > 1:
			return "", nil, fmt.Errorf("run %q: %w: %d runs start with it", id, ErrNotFound, len(matches))
		}
		p = matches[0]
	}
	entries, err := readFile(p)
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSuffix(filepath.Base(p), ".jsonl"), entries, nil
}

func readFile(p string) ([]Entry, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read run log: %w", err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read run log %s: %w", filepath.Base(p), err)
	}
	return out, nil
}
