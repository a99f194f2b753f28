package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchRunSectionsFailedSection: a section that fails is reported on
// stderr and makes the whole run exit 1, while the other sections are
// still measured and written and the failed section's old table is left
// as it was (held-out mutant cli-bench-failed-section-exit-ok: a failed
// section exited 0, and a CI job updating BENCHMARKS.md passed with a
// table missing).
func TestBenchRunSectionsFailedSection(t *testing.T) {
	section := func(key, body string, err error) benchSection {
		return benchSection{key: key, title: "Table " + key, command: "fixpoint bench " + key,
			run: func(context.Context, *app) (string, error) { return body, err }}
	}
	sections := []benchSection{
		section("first", "| first | 1 |", nil),
		section("broken", "", errors.New("the engine is gone")),
		section("last", "| last | 3 |", nil),
	}
	newApp := func(stdout, stderr io.Writer) *app {
		return &app{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr,
			getenv: func(string) string { return "" }, logger: slog.New(slog.DiscardHandler)}
	}

	t.Run("print", func(t *testing.T) {
		var out, errb strings.Builder
		if code := runSections(t.Context(), newApp(&out, &errb), sections, ""); code != exitNotReached {
			t.Errorf("runSections with a failed section = %d, want %d", code, exitNotReached)
		}
		if !strings.Contains(out.String(), "| first | 1 |") || !strings.Contains(out.String(), "| last | 3 |") {
			t.Errorf("stdout lacks the sections that ran:\n%s", out.String())
		}
		if !strings.Contains(errb.String(), "fixpoint bench broken: the engine is gone") {
			t.Errorf("stderr does not name the failed section:\n%s", errb.String())
		}
	})

	t.Run("write", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "BENCHMARKS.md")
		old := "# Benchmarks\n\n" + renderSection(section("broken", "| broken | old |", nil), "| broken | old |")
		if err := os.WriteFile(file, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		var errb strings.Builder
		if code := runSections(t.Context(), newApp(io.Discard, &errb), sections, file); code != exitNotReached {
			t.Errorf("runSections --write with a failed section = %d, want %d\nstderr:\n%s", code, exitNotReached, errb.String())
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"| first | 1 |", "| broken | old |", "| last | 3 |"} {
			if !strings.Contains(string(got), want) {
				t.Errorf("%s lacks %q:\n%s", file, want, got)
			}
		}
	})

	t.Run("all pass", func(t *testing.T) {
		ok := []benchSection{sections[0], sections[2]}
		if code := runSections(t.Context(), newApp(io.Discard, io.Discard), ok, ""); code != exitOK {
			t.Errorf("runSections with every section measured = %d, want %d", code, exitOK)
		}
	})
}
