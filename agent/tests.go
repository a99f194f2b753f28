package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// STAND-IN until sandbox/testrun lands (Detect, Run).
type testRunner struct {
	Name string
	Args []string
}

func detectRunner(snap *sandbox.Snapshot, override string) testRunner {
	if override != "" {
		return testRunner{Name: "custom", Args: strings.Fields(override)}
	}
	switch snap.Language() {
	case "go":
		return testRunner{Name: "go", Args: []string{"go", "test", "-json", "./..."}}
	case "node":
		return testRunner{Name: "node", Args: []string{"node", "--test"}}
	case "python":
		return testRunner{Name: "unittest", Args: []string{"python3", "-m", "unittest", "-v"}}
	}
	return testRunner{Name: "exit-code", Args: []string{"true"}}
}

func runTestCmd(ctx context.Context, sess sandbox.Session, r testRunner, limits sandbox.Limits) (*testrun.Report, error) {
	res, err := sess.Run(ctx, sandbox.Command{Args: r.Args, Limits: limits})
	if err != nil {
		return nil, err
	}
	rep := &testrun.Report{Runner: r.Name, Command: r.Args, ExitCode: res.ExitCode, TimedOut: res.TimedOut, OOM: res.OOMKilled, Duration: res.Duration}
	if r.Name == "go" {
		parseGoJSON(rep, res.Stdout)
		rep.Output = trimOutput(string(res.Stderr), 4000)
	} else {
		rep.Output = trimOutput(string(res.Stdout)+string(res.Stderr), 4000)
	}
	rep.Count()
	return rep, nil
}

func parseGoJSON(rep *testrun.Report, out []byte) {
	type ev struct{ Action, Package, Test, Output string }
	idx := map[string]int{}
	var pkgOut = map[string]*strings.Builder{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e ev
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Test == "" {
			if pkgOut[e.Package] == nil {
				pkgOut[e.Package] = &strings.Builder{}
			}
			if e.Action == "output" {
				pkgOut[e.Package].WriteString(e.Output)
			}
			if e.Action == "fail" {
				found := false
				for _, t := range rep.Tests {
					if t.Package == e.Package {
						found = true
					}
				}
				if !found {
					rep.Tests = append(rep.Tests, testrun.Result{ID: e.Package, Name: e.Package, Package: e.Package, Status: testrun.StatusError, Excerpt: trimOutput(pkgOut[e.Package].String(), 2000)})
				}
			}
			continue
		}
		id := e.Package + "." + e.Test
		i, ok := idx[id]
		if !ok {
			i = len(rep.Tests)
			idx[id] = i
			rep.Tests = append(rep.Tests, testrun.Result{ID: id, Name: e.Test, Package: e.Package})
		}
		t := &rep.Tests[i]
		switch e.Action {
		case "output":
			t.Excerpt += e.Output
		case "pass":
			t.Status = testrun.StatusPass
		case "fail":
			t.Status = testrun.StatusFail
		case "skip":
			t.Status = testrun.StatusSkip
		}
	}
	for i := range rep.Tests {
		t := &rep.Tests[i]
		if t.Status == "" {
			t.Status = testrun.StatusError
		}
		if t.Status == testrun.StatusFail {
			for _, l := range strings.Split(t.Excerpt, "\n") {
				l = strings.TrimSpace(l)
				if f, rest, ok := strings.Cut(l, ".go:"); ok && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "===") {
					t.Message = strings.TrimSpace(rest[strings.Index(rest, ":")+1:])
					t.File = f + ".go"
					break
				}
			}
		}
		t.Excerpt = trimOutput(t.Excerpt, 2000)
	}
}

func trimOutput(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + "\n… (trimmed) …\n" + s[len(s)-n/2:]
}
