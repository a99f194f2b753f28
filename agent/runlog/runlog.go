// Package runlog writes and reads the per-run JSON-lines logs kept under
// <DataDir>/runs/<run-id>.jsonl.
//
// A [Writer] appends [Entry] lines (prompts, replies, edits, test results,
// timings); [List] summarises the runs of a directory and [Read] loads one
// run. Every string of every entry passes through the writer's redactor
// before it reaches the disk. Logs are 0600 files in a 0700 directory.
package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
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
}

// Writer appends entries to one run log. It is safe for concurrent use.
type Writer struct {
	mu     sync.Mutex // guards f and err
	f      *os.File
	path   string
	redact func(string) string
	err    error // first write error; later writes are dropped
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
	w := &Writer{f: f, path: p}
	if opts != nil {
		w.redact = opts.Redact
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
	if w.redact != nil {
		if raw, err = redactJSON(raw, w.redact); err != nil {
			return fmt.Errorf("redact %s entry: %w", kind, err)
		}
	}
	line, err := json.Marshal(Entry{Time: time.Now().UTC(), Kind: kind, Iteration: iter, Data: raw})
	if err != nil {
		return fmt.Errorf("encode %s entry: %w", kind, err)
	}
	s := string(line)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := w.f.WriteString(s + "\n"); err != nil {
		w.err = fmt.Errorf("write run log: %w", err)
		return w.err
	}
	return nil
}

// redactJSON applies redact to every string (object keys included) of a
// JSON document. Numbers keep their text.
func redactJSON(raw []byte, redact func(string) string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(redactValue(v, redact))
}

func redactValue(v any, redact func(string) string) any {
	switch x := v.(type) {
	case string:
		return redact(x)
	case []any:
		for i := range x {
			x[i] = redactValue(x[i], redact)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[redact(k)] = redactValue(e, redact)
		}
		return out
	}
	return v
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
