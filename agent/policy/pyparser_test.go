package policy

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
)

// requireParser returns a PythonParser closed at the end of the test. A
// missing interpreter skips the test, and fails it under CI=true.
func requireParser(t *testing.T) *PythonParser {
	t.Helper()
	p := NewPythonParser("")
	if p == nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no python3 on this machine: the persistent parser cannot be tested (install python3)")
		}
		t.Skip("no python3")
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// One process answers many checks, from several goroutines, with the same
// findings as a process per check; it restarts after it dies.
func TestPythonParserPersistent(t *testing.T) {
	p := requireParser(t)
	c, err := New(config.Policy{}, &Options{Parser: p})
	if err != nil {
		t.Fatal(err)
	}
	one, err := New(config.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, src, want string
	}{
		{name: "clean", src: "def f(x):\n    return x + 1\n"},
		{name: "subprocess", src: "import subprocess\n", want: "python.subprocess"},
		{name: "eval", src: "def f(s):\n    return eval(s)\n", want: "python.eval-exec"},
		{name: "syntax error", src: "def f(:\n"},
		{name: "not utf-8", src: "x = '\xff'\n"},
	}
	check := func(t *testing.T, c *Checker, src string) string {
		fs, err := c.Check(t.Context(), "a.py", []byte(src))
		if err != nil {
			t.Fatalf("Check(%q): %v", src, err)
		}
		var rules []string
		for _, f := range fs {
			rules = append(rules, f.Rule)
		}
		return strings.Join(rules, ",")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := check(t, c, tt.src); got != tt.want {
				t.Errorf("persistent Check(%q) = %q, want %q", tt.src, got, tt.want)
			}
			if got := check(t, one, tt.src); got != tt.want {
				t.Errorf("one-shot Check(%q) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
	p.mu.Lock()
	pid := p.proc.cmd.Process.Pid
	p.mu.Unlock()

	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := range 40 {
		wg.Go(func() {
			tt := tests[i%len(tests)]
			if got := check(t, c, tt.src); got != tt.want {
				errs <- tt.name + ": " + got
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent check %s", e)
	}
	p.mu.Lock()
	same := p.proc != nil && p.proc.cmd.Process.Pid == pid
	p.mu.Unlock()
	if !same {
		t.Errorf("the parser process changed between checks: want one process for all of them")
	}

	// A dead process is replaced at the next check.
	p.mu.Lock()
	p.proc.cmd.Process.Kill()
	p.mu.Unlock()
	if _, err := c.Check(t.Context(), "a.py", []byte("x = 1\n")); err == nil {
		t.Log("the check right after the kill still got an answer") // the kill may land after the reply
	}
	if got := check(t, c, "import socket\n"); got != "python.socket" {
		t.Errorf("after a restart: Check = %q, want python.socket", got)
	}
}

func TestPythonParserCancelAndClose(t *testing.T) {
	p := requireParser(t)
	c, err := New(config.Policy{}, &Options{Parser: p})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Check(ctx, "a.py", []byte("x = 1\n")); !errors.Is(err, context.Canceled) {
		t.Errorf("Check with a cancelled context: err = %v, want context.Canceled", err)
	}
	if _, err := c.Check(t.Context(), "a.py", []byte("x = 1\n")); err != nil {
		t.Errorf("Check after a cancelled one: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := c.Check(t.Context(), "a.py", []byte("x = 1\n")); !errors.Is(err, ErrParserClosed) {
		t.Errorf("Check after Close: err = %v, want ErrParserClosed", err)
	}
}
