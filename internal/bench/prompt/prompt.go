// Package prompt is the prompt-economy benchmark (`fixpoint bench
// context`): each [Case] runs `fixpoint fix` through the real loop with a
// scripted model that replies with the correct fix, and [Result] says how
// many prompt bytes each model request carried and whether the file to
// edit was in the context. [Cases] lists the bundled examples and real
// projects with a planted one-line bug.
package prompt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Case is one project of the context benchmark: a copy of Source with
// a bug planted (Old replaced by New in File, once), which a scripted model
// fixes by replacing New with Old again. A case whose project is already
// buggy leaves Old and New empty and gives Fix.
type Case struct {
	Name    string
	Source  string // the project directory (copied; never written)
	File    string // the file the fix edits: it must be in the model's context
	Old     string // the correct text …
	New     string // … and the planted bug
	Fix     string // the fix reply, when the project ships its bug
	TestCmd string // overrides test runner detection (e.g. a src/ layout)
}

// Result is what the benchmark measured for one case.
type Result struct {
	Case       string
	Files      int   // workspace files
	Requests   []int // prompt bytes (system + user) per model request
	Total      int   // prompt bytes over the run
	InContext  bool  // File was shown (whole or as an excerpt) in every request
	Whole      bool  // … and shown whole in the first request
	Verified   bool
	StopReason string
}

// tokens estimates a text's tokens as the loop does: four bytes each.
func tokens(s string) int { return (len(s) + 3) / 4 }

// fixModel replies to every request with the fix and records the prompts.
type fixModel struct {
	mu      sync.Mutex
	fix     string
	prompts []string // system + "\n" + user per request
}

func (m *fixModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var all strings.Builder
	for _, msg := range req.Messages {
		all.WriteString(msg.Content)
	}
	m.prompts = append(m.prompts, all.String())
	reply := m.fix
	// A separate plan request (older loops) gets a plan, not edits.
	if strings.Contains(req.Messages[len(req.Messages)-1].Content, "## Task: write a plan") {
		reply = "1. Fix the planted bug."
	}
	return &llm.Response{Content: reply, Usage: llm.Usage{In: tokens(all.String()), Out: tokens(reply)}}, nil
}

// Run runs each case through the real loop (snapshot, baseline,
// prompts, edit, sandboxed tests) with a scripted model that replies with the
// correct fix, and reports the prompt bytes and whether the file to edit was
// in the context. cfg is copied; its DataDir should be a temporary dir.
func Run(ctx context.Context, cfg *config.Config, backend sandbox.Backend, cases []Case) ([]Result, error) {
	var out []Result
	for _, c := range cases {
		r, err := runCase(ctx, cfg, backend, c)
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.Name, err)
		}
		out = append(out, *r)
	}
	return out, nil
}

func runCase(ctx context.Context, cfg *config.Config, backend sandbox.Backend, c Case) (*Result, error) {
	root, err := os.MkdirTemp("", "fixpoint-bench-context-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	if err := os.CopyFS(root, os.DirFS(c.Source)); err != nil {
		return nil, err
	}
	fix := c.Fix
	if c.Old != "" {
		p := filepath.Join(root, c.File)
		os.Chmod(p, 0o644)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if n := strings.Count(string(data), c.Old); n != 1 {
			return nil, fmt.Errorf("the text to plant the bug in occurs %d times in %s, want once", n, c.File)
		}
		orig := string(data)
		planted := strings.Replace(orig, c.Old, c.New, 1)
		if err := os.WriteFile(p, []byte(planted), 0o644); err != nil {
			return nil, err
		}
		// The fix replaces the whole lines around the plant.
		at := strings.Index(orig, c.Old)
		start := strings.LastIndex(orig[:at], "\n") + 1
		end := at + len(c.New)
		if i := strings.Index(planted[end:], "\n"); i >= 0 {
			end += i + 1
		} else {
			end = len(planted)
		}
		search := planted[start:end]
		replace := orig[start : end-len(c.New)+len(c.Old)]
		fix = c.File + "\n<<<<<<< SEARCH\n" + search + "=======\n" + replace + ">>>>>>> REPLACE\n"
	}
	cc := *cfg
	cc.TestCmd = c.TestCmd
	m := &fixModel{fix: fix}
	e := agent.New(&cc, &agent.Options{Model: m, Backend: backend, Warn: io.Discard})
	defer e.Close()
	res, err := e.Run(ctx, agent.Request{Mode: agent.ModeFix, Root: root}, nil)
	if err != nil {
		return nil, err
	}
	if res.StopReason == agent.StopAlreadyPassing {
		return nil, errors.New("the planted bug fails no test")
	}
	snap, err := sandbox.SnapshotDir(root, nil)
	if err != nil {
		return nil, err
	}
	r := &Result{Case: c.Name, Files: len(snap.Files), Verified: res.Verified, StopReason: res.StopReason, InContext: len(m.prompts) > 0}
	for i, p := range m.prompts {
		r.Requests = append(r.Requests, len(p))
		r.Total += len(p)
		if !strings.Contains(p, "## File: "+c.File+"\n") && !strings.Contains(p, "## File: "+c.File+" (excerpt") {
			r.InContext = false
		}
		if i == 0 {
			r.Whole = strings.Contains(p, "## File: "+c.File+"\n")
		}
	}
	return r, nil
}
