// Package firstaction measures how long a user waits between asking for
// a code action and seeing the first test result, cold and warm
// (`fixpoint bench firstaction`, issue 14.4).
//
// [Run] starts the real `fixpoint serve` binary for every sample and
// speaks LSP to it over its stdin and stdout, as an editor does, with the
// scripted model of agent/llmtest and the docker sandbox. A sample opens
// the project's test file, then times textDocument/codeAction, the
// "Fix until tests pass" command it offers, and the wait until the first
// $/fixpoint/status carrying test counts (the baseline run). The test
// command's own time, from the run log, is subtracted: what is left is
// what fixpoint adds. "Cold" turns prewarming off ([server] idle_timeout
// "0s"); "warm" waits for the prewarm's "Sandbox ready" before asking.
// Both start a new server process each time, with the engine's caches
// (images, dependency installs, Go build cache) already filled by
// earlier samples, as for a user who opens the editor again.
package firstaction

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Options configure Run. Binary is required; zero values of the others
// are documented defaults.
type Options struct {
	// Binary is the fixpoint executable to run as `Binary serve`.
	Binary string
	// Samples per case and mode; default 5.
	Samples int
	// Progress receives one line per sample; nil discards.
	Progress io.Writer
	// Logger receives debug logs; nil discards.
	Logger *slog.Logger
	// Backend is FIXPOINT_SANDBOX for the server; default "docker".
	Backend string
	// Cases to measure; nil = Cases().
	Cases []Case
}

// Case is a project the benchmark fixes.
type Case struct {
	Name  string
	Files map[string]string // the project
	Test  string            // the test file the user has open
	Fix   string            // the scripted model's edit
}

// Cases are the projects of the benchmark: one Python and one Go project
// with a failing test, each run in its language's sandbox image.
func Cases() []Case {
	return []Case{
		{
			Name: "Python (unittest)", Test: "test_calc.py",
			Files: map[string]string{
				"calc.py":      "def add(a, b):\n    return a - b\n",
				"test_calc.py": "import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n",
			},
			Fix: "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n",
		},
		{
			Name: "Go (go test)", Test: "calc_test.go",
			Files: map[string]string{
				"go.mod":       "module example.com/calc\n\ngo 1.21\n",
				"calc.go":      "package calc\n\n// Add returns a+b.\nfunc Add(a, b int) int { return a - b }\n",
				"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
			},
			Fix: "calc.go\n<<<<<<< SEARCH\nfunc Add(a, b int) int { return a - b }\n=======\nfunc Add(a, b int) int { return a + b }\n>>>>>>> REPLACE\n",
		},
	}
}

// Sample is one measured first action.
type Sample struct {
	First    time.Duration // codeAction sent → first test result received
	TestTime time.Duration // the test command's own time (run log)
	Prewarm  time.Duration // initialized → "Sandbox ready" (warm only)
}

// Overhead is what fixpoint adds to the test's own time.
func (s Sample) Overhead() time.Duration { return s.First - s.TestTime }

// Row is one case in one mode.
type Row struct {
	Case    string
	Warm    bool
	Samples []Sample
}

// Table is what Run measured.
type Table struct {
	Rows    []Row
	Samples int
	Load    string // /proc/loadavg's first three fields at the end ("" when unknown)
}

// Target is the bound on the warm overhead.
const Target = 150 * time.Millisecond

// Run measures every case cold and warm.
func Run(ctx context.Context, opts *Options) (*Table, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Binary == "" {
		return nil, errors.New("firstaction: no fixpoint binary to run (Options.Binary)")
	}
	o.Samples = cmp.Or(o.Samples, 5)
	o.Backend = cmp.Or(o.Backend, "docker")
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	t := &Table{Samples: o.Samples}
	if o.Cases == nil {
		o.Cases = Cases()
	}
	for _, c := range o.Cases {
		dir, err := os.MkdirTemp("", "fixpoint-bench-firstaction-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		root := filepath.Join(dir, "project")
		for name, text := range c.Files {
			if err := writeFile(filepath.Join(root, name), text); err != nil {
				return nil, err
			}
		}
		model := llmtest.NewServer(&llmtest.Script{Default: &llmtest.Reply{Content: c.Fix}})
		// One sample that is not counted fills the engine's caches
		// (install volumes, Go build cache) as a user's earlier session would.
		if _, err := measure(ctx, &o, c, dir, root, model.URL(), false); err != nil {
			model.Close()
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		for _, warm := range []bool{false, true} {
			row := Row{Case: c.Name, Warm: warm}
			for i := range o.Samples {
				s, err := measure(ctx, &o, c, dir, root, model.URL(), warm)
				if err != nil {
					model.Close()
					return nil, fmt.Errorf("%s, %s, sample %d: %w", c.Name, mode(warm), i+1, err)
				}
				fmt.Fprintf(o.Progress, "firstaction: %s %s %d/%d: first result %v, test %v, overhead %v\n",
					c.Name, mode(warm), i+1, o.Samples, ms(s.First), ms(s.TestTime), ms(s.Overhead()))
				row.Samples = append(row.Samples, s)
			}
			t.Rows = append(t.Rows, row)
		}
		model.Close()
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			t.Load = strings.Join(f[:3], ", ")
		}
	}
	return t, nil
}

func mode(warm bool) string {
	if warm {
		return "warm"
	}
	return "cold"
}

func writeFile(p, text string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(text), 0o644)
}

// measure runs one server process and times one first action.
func measure(ctx context.Context, o *Options, c Case, dir, root, modelURL string, warm bool) (Sample, error) {
	var s Sample
	idle := `"0s"`
	if warm {
		idle = `"10m"`
	}
	data, err := os.MkdirTemp(dir, "data-")
	if err != nil {
		return s, err
	}
	// idle_timeout is a user-only key (the server's XDG_CONFIG_HOME is
	// data/config), and the server prepares only a folder the user trusts.
	userDir := filepath.Join(data, "config", "fixpoint")
	if err := writeFile(filepath.Join(userDir, "config.toml"), "[server]\nidle_timeout = "+idle+"\n"); err != nil {
		return s, err
	}
	if _, err := (config.TrustStore{Dir: filepath.Join(userDir, "trust")}).TrustFolder(root); err != nil {
		return s, err
	}
	srv, err := startServer(ctx, o, root, data, modelURL)
	if err != nil {
		return s, err
	}
	defer srv.stop()
	cl := srv.client
	caps := map[string]any{
		"window":    map[string]any{"workDoneProgress": true},
		"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
	}
	rootURI := fileURI(root)
	if err := cl.call(ctx, "initialize", map[string]any{"processId": os.Getpid(), "rootUri": rootURI, "capabilities": caps,
		"workspaceFolders": []any{map[string]any{"uri": rootURI, "name": "project"}}}, nil); err != nil {
		return s, err
	}
	from := cl.mark()
	t0 := time.Now()
	if err := cl.notify(ctx, "initialized", map[string]any{}); err != nil {
		return s, err
	}
	if warm {
		m, _, err := cl.wait(from, "$/progress", func(raw json.RawMessage) bool {
			return strings.Contains(string(raw), `"kind":"end"`)
		}, 5*time.Minute)
		if err != nil {
			return s, err
		}
		if !strings.Contains(string(m.raw), "Sandbox ready") {
			return s, fmt.Errorf("the prewarm did not succeed: %s\n%s", m.raw, cl.messagesText())
		}
		s.Prewarm = m.at.Sub(t0)
	}
	testURI := fileURI(filepath.Join(root, c.Test))
	if err := cl.notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": testURI, "languageId": strings.TrimPrefix(filepath.Ext(c.Test), "."), "version": 1, "text": c.Files[c.Test]}}); err != nil {
		return s, err
	}
	from = cl.mark()
	t1 := time.Now()
	var actions []struct {
		Title   string `json:"title"`
		Command *struct {
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		} `json:"command"`
	}
	zero := map[string]any{"line": 0, "character": 0}
	if err := cl.call(ctx, "textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": testURI},
		"range": map[string]any{"start": zero, "end": zero}, "context": map[string]any{"diagnostics": []any{}}}, &actions); err != nil {
		return s, err
	}
	i := slices.IndexFunc(actions, func(a struct {
		Title   string `json:"title"`
		Command *struct {
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		} `json:"command"`
	}) bool {
		return a.Command != nil && a.Command.Command == "fixpoint.fixTests"
	})
	if i < 0 {
		return s, fmt.Errorf("the server offered no fixpoint.fixTests code action for %s: %v", c.Test, actions)
	}
	var started struct {
		Started bool   `json:"started"`
		Message string `json:"message"`
	}
	if err := cl.call(ctx, "workspace/executeCommand", map[string]any{"command": actions[i].Command.Command, "arguments": actions[i].Command.Arguments}, &started); err != nil {
		return s, err
	}
	if !started.Started {
		return s, fmt.Errorf("the fix did not start: %s", started.Message)
	}
	first, next, err := cl.wait(from, "$/fixpoint/status", func(raw json.RawMessage) bool {
		var st struct {
			Failing, Passing int
		}
		return json.Unmarshal(raw, &st) == nil && st.Failing+st.Passing > 0
	}, 5*time.Minute)
	if err != nil {
		return s, fmt.Errorf("%w\n%s", err, cl.messagesText())
	}
	s.First = first.at.Sub(t1)
	final, _, err := cl.wait(next, "$/fixpoint/status", func(raw json.RawMessage) bool {
		return !strings.Contains(string(raw), `"state":"running"`)
	}, 5*time.Minute)
	if err != nil {
		return s, err
	}
	if !strings.Contains(string(final.raw), `"state":"verified-not-applied"`) {
		return s, fmt.Errorf("the run did not end verified: %s", final.raw)
	}
	if s.TestTime, err = baselineTime(filepath.Join(data, "runs")); err != nil {
		return s, err
	}
	return s, srv.shutdown(ctx)
}

// baselineTime reads the baseline test report's own duration from the
// only run log in dir.
func baselineTime(dir string) (time.Duration, error) {
	runs, err := runlog.List(dir)
	if err != nil {
		return 0, err
	}
	if len(runs) != 1 {
		return 0, fmt.Errorf("want one run log in %s, found %d", dir, len(runs))
	}
	_, entries, err := runlog.Read(dir, runs[0].RunID)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if e.Kind == runlog.KindTest && e.Iteration == 0 {
			var rep testrun.Report
			if err := json.Unmarshal(e.Data, &rep); err != nil {
				return 0, fmt.Errorf("run log %s: %w", runs[0].RunID, err)
			}
			return rep.Duration, nil
		}
	}
	return 0, fmt.Errorf("run log %s has no baseline test report", runs[0].RunID)
}

// server is one `fixpoint serve` process.
type server struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	client *client
	cancel context.CancelFunc
}

func startServer(ctx context.Context, o *Options, root, data, modelURL string) (*server, error) {
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, o.Binary, "serve")
	cmd.Dir = root
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FIXPOINT_") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "FIXPOINT_BASE_URL="+modelURL, "FIXPOINT_MODEL=llmtest", "FIXPOINT_SANDBOX="+o.Backend,
		"FIXPOINT_DATA_DIR="+data, "XDG_CONFIG_HOME="+filepath.Join(data, "config"), "FIXPOINT_LOG=info")
	cmd.Stderr = logWriter{o.Logger}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start %s serve: %w", o.Binary, err)
	}
	s := &server{cmd: cmd, stdin: stdin, cancel: cancel}
	s.client = newClient(ctx, pipeConn{stdout, stdin})
	return s, nil
}

// shutdown ends the session as an editor does and waits for the process,
// which removes its containers before it exits.
func (s *server) shutdown(ctx context.Context) error {
	if err := s.client.call(ctx, "shutdown", nil, nil); err != nil {
		return err
	}
	_ = s.client.notify(ctx, "exit", nil)
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("fixpoint serve after shutdown and exit: %w", err)
	}
	s.cmd = nil
	return nil
}

// stop ends a process that shutdown did not end (a failed sample).
func (s *server) stop() {
	if s.cmd != nil {
		s.stdin.Close() // EOF: the server cancels and cleans up
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			s.cancel()
			<-done
		}
	}
	s.cancel()
}

type pipeConn struct {
	io.Reader
	io.WriteCloser
}

// logWriter sends the server's stderr to the debug log.
type logWriter struct{ l *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.l.Debug("fixpoint serve", "stderr", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func fileURI(p string) string { return "file://" + filepath.ToSlash(p) }

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
