package testrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// The fuzz targets feed hostile bytes to each parser. The seed corpus is
// committed under testdata/fuzz/<Target>/ (the real outputs plus cases the
// fuzzers found); `go test` runs the seeds, and
//   go test -fuzz=FuzzParseGoJSON -fuzztime=5m ./sandbox/testrun
// explores further. Every run must keep the invariants in checkReport.

func FuzzParseGoJSON(f *testing.F) {
	addRaw(f, "go-", "stdout")
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Runner{Name: RunnerGo, Format: GoTestJSON("example.com/calc", nil), Args: []string{"go", "test", "-json", "./..."}}
		rep := Parse(r, &sandbox.Result{ExitCode: 1, Stdout: data, Stderr: data}, nil)
		checkReport(t, rep, len(data))
	})
}

func FuzzParseJUnit(f *testing.F) {
	addRaw(f, "pytest-", "report")
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Runner{Name: RunnerPytest, Format: Pytest, ReportPath: JUnitPath}
		stdout := []byte("PASSED tests/test_calc.py::test_add\nFAILED tests/test_calc.py::TestX::test_y[1-2] - assert 1 == 2\n")
		rep := Parse(r, &sandbox.Result{ExitCode: 1, Stdout: stdout}, data)
		checkReport(t, rep, len(data))
		rep = Parse(Runner{Name: RunnerUnittest, Format: Unittest}, &sandbox.Result{ExitCode: 1, Stderr: data}, nil)
		checkReport(t, rep, len(data))
	})
}

func FuzzParseTAP(f *testing.F) {
	addRaw(f, "node-", "stdout")
	addRaw(f, "npm-", "stdout")
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := Parse(Runner{Name: RunnerNode, Format: TAP}, &sandbox.Result{ExitCode: 1, Stdout: data}, nil)
		checkReport(t, rep, len(data))
		rep = Parse(Runner{Name: RunnerCustom, Formats: testFormats()}, &sandbox.Result{ExitCode: 2, Stdout: data, TimedOut: true}, nil)
		checkReport(t, rep, len(data))
	})
}

func FuzzParseJSReports(f *testing.F) {
	for _, prefix := range []string{"jest-", "vitest-", "mocha-"} {
		addRaw(f, prefix, "report")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{RunnerJest, RunnerVitest, RunnerMocha} {
			rep := Parse(Runner{Name: name, Format: formatNamed(name)}, &sandbox.Result{ExitCode: 1}, data)
			checkReport(t, rep, len(data))
			rep = Parse(Runner{Name: name, Format: formatNamed(name)}, &sandbox.Result{ExitCode: 1, Stdout: append([]byte("log line\n"), data...)}, nil)
			checkReport(t, rep, len(data))
		}
		rep := Parse(Runner{Name: RunnerCustom, Formats: testFormats()}, &sandbox.Result{ExitCode: 1, Stdout: data}, data)
		checkReport(t, rep, len(data))
	})
}

// addRaw adds the stored real outputs whose case name starts with prefix.
func addRaw(f *testing.F, prefix, file string) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "raw", prefix+"*"))
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join(d, file)); err == nil {
			f.Add(b)
		}
	}
}

// checkReport holds for any input: counts agree with the tests, every
// location is workspace-relative, sizes stay bounded, and the report
// encodes as JSON.
func checkReport(t *testing.T, rep *Report, inputLen int) {
	t.Helper()
	if rep == nil {
		t.Fatal("Parse returned nil")
	}
	if rep.Passed+rep.Failed+rep.Skipped != len(rep.Tests) {
		t.Fatalf("counts %d+%d+%d != %d tests", rep.Passed, rep.Failed, rep.Skipped, len(rep.Tests))
	}
	if rep.ExitCode != 0 && rep.Failed == 0 {
		t.Fatalf("exit code %d but no failure reported", rep.ExitCode)
	}
	if len(rep.Tests) > maxTests+1 {
		t.Fatalf("%d tests, more than the bound %d", len(rep.Tests), maxTests)
	}
	if len(rep.Output) > maxOutput+64 {
		t.Fatalf("Output is %d bytes, bound is %d", len(rep.Output), maxOutput)
	}
	for _, r := range rep.Tests {
		switch r.Status {
		case StatusPass, StatusFail, StatusSkip, StatusError:
		default:
			t.Fatalf("test %q has status %q", r.ID, r.Status)
		}
		if len(r.Excerpt) > maxExcerpt+64 || len(r.Message) > maxMessage+8 || len(r.Expected) > maxMessage+8 || len(r.Actual) > maxMessage+8 {
			t.Fatalf("test %q: unbounded field (excerpt %d, message %d)", r.ID, len(r.Excerpt), len(r.Message))
		}
		if len(r.Frames) > maxFrames+1 {
			t.Fatalf("test %q: %d frames", r.ID, len(r.Frames))
		}
		if len(r.ID) > maxID+8 && len(r.ID) > inputLen+64 {
			t.Fatalf("test id of %d bytes from %d bytes of input", len(r.ID), inputLen)
		}
		locs := append([]Frame{{File: r.File}}, r.Frames...)
		for _, f := range locs {
			if f.File == "" {
				continue
			}
			if _, err := sandbox.CleanRel(f.File); err != nil || strings.HasPrefix(f.File, "/") {
				t.Fatalf("test %q: location %q is not workspace-relative: %v", r.ID, f.File, err)
			}
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatalf("report does not encode: %v", err)
	}
}

// FuzzParseHuman: the default output of a runner in a composed npm script.
// Counts may exceed the tests listed (a summary counts tests it does not
// name), never fall short of them.
func FuzzParseHuman(f *testing.F) {
	for _, s := range []string{jestQuiet, jestVerbose, mochaSpec, vitestDefault} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, composed := range []string{"", RunnerJest, RunnerVitest, RunnerMocha} {
			for _, exit := range []int{0, 1} {
				rep := Parse(Runner{Name: RunnerNPM, Format: NPM(composed)}, &sandbox.Result{ExitCode: exit, Stdout: data, Stderr: data}, nil)
				if rep.Passed+rep.Failed+rep.Skipped < len(rep.Tests) {
					t.Fatalf("counts %d+%d+%d < %d tests", rep.Passed, rep.Failed, rep.Skipped, len(rep.Tests))
				}
				if exit != 0 && rep.Failed == 0 {
					t.Fatal("exit code 1 but no failure reported")
				}
				if rep.Passed > maxTests || rep.Failed > maxTests+1 || rep.Skipped > maxTests || len(rep.Tests) > maxTests+1 {
					t.Fatalf("unbounded counts %d/%d/%d, %d tests", rep.Passed, rep.Failed, rep.Skipped, len(rep.Tests))
				}
				for _, r := range rep.Tests {
					if len(r.Excerpt) > maxExcerpt+64 || len(r.Message) > maxMessage+8 || len(r.ID) > maxID+16 {
						t.Fatalf("test %q: unbounded field", r.ID)
					}
				}
			}
		}
	})
}
