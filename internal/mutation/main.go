// Command mutation runs targeted mutants of fixpoint's security-critical
// code against the tests that should notice them, and reports the share
// that was caught (the mutation score).
//
// Each mutant in mutants.txtar is one small, plausible bug: an exact
// string in one file replaced by another. For each mutant the tool copies
// the repository (tracked and untracked, not ignored files) into a
// temporary directory once, applies the mutant there, runs `go test` on the
// named packages and tests with CI=true (so a missing prerequisite fails
// instead of skipping), and restores the file. A failing run kills the
// mutant; a passing run means it survived: a regression CI would wave
// through. A mutant whose text is no longer in its file is "stale" (the
// code moved on: update mutants.txtar), and one that does not compile is
// "invalid"; neither counts in the score. Before the mutants, the selected
// tests run once unmutated: a test that fails there would kill every
// mutant and prove nothing, so its mutants are reported "unproven".
//
// Usage (from the repository root; `make mutation` runs this):
//
//	go run ./internal/mutation [-file mutants.txtar] [-only substring] [-list] [-timeout 15m]
//
// -file names the mutants file; internal/mutation/heldout.txtar is the
// held-out set written without reading the tests (`make mutation-heldout`,
// HELDOUT.md).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/txtar"
)

// Mutant is one targeted bug.
type Mutant struct {
	Name string
	File string   // repository-relative
	Pkgs []string // go test packages, e.g. ./agent/redact
	Run  string   // go test -run pattern; "" runs every test of Pkgs
	Why  string   // the regression it stands for
	Old  string   // exact text, present exactly once in File
	New  string
}

// Outcome of one mutant.
type Outcome string

const (
	Killed   Outcome = "killed"
	Survived Outcome = "survived"
	Stale    Outcome = "stale"
	Invalid  Outcome = "invalid"
	Unproven Outcome = "unproven"
)

func main() {
	file := flag.String("file", "internal/mutation/mutants.txtar", "the mutants file (internal/mutation/heldout.txtar: the held-out set, HELDOUT.md)")
	flag.StringVar(file, "mutants", *file, "the same as -file")
	only := flag.String("only", "", "run only mutants whose name contains this")
	list := flag.Bool("list", false, "list the mutants and exit")
	timeout := flag.Duration("timeout", 15*time.Minute, "time limit of one go test run")
	flag.Parse()
	data, err := os.ReadFile(*file)
	if err != nil {
		fatal(err)
	}
	ms, err := Parse(string(data))
	if err != nil {
		fatal(fmt.Errorf("%s: %w", *file, err))
	}
	var sel []Mutant
	for _, m := range ms {
		if strings.Contains(m.Name, *only) {
			sel = append(sel, m)
		}
	}
	if *list {
		for _, m := range sel {
			fmt.Printf("%-40s %s (%s)\n", m.Name, m.Why, m.File)
		}
		return
	}
	ctx := context.Background()
	tree, err := copyRepo(".")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tree)
	r := &runner{tree: tree, timeout: *timeout, out: os.Stdout, baseline: map[string]bool{}}
	res := map[Outcome]int{}
	var survivors []string
	for i, m := range sel {
		o, detail := r.run(ctx, m)
		res[o]++
		fmt.Printf("[%2d/%d] %-8s %-40s %s\n", i+1, len(sel), strings.ToUpper(string(o)), m.Name, detail)
		if o == Survived {
			survivors = append(survivors, fmt.Sprintf("%s: %s", m.Name, m.Why))
		}
	}
	fmt.Println(Summary(res))
	for _, s := range survivors {
		fmt.Println("  survived: " + s)
	}
}

// Summary is the score line.
func Summary(res map[Outcome]int) string {
	viable := res[Killed] + res[Survived]
	score := 0.0
	if viable > 0 {
		score = 100 * float64(res[Killed]) / float64(viable)
	}
	return fmt.Sprintf("mutation score: %d/%d killed (%.0f%%); %d stale, %d invalid, %d unproven",
		res[Killed], viable, score, res[Stale], res[Invalid], res[Unproven])
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutation:", err)
	os.Exit(2)
}

// Parse reads mutants: one txtar section per mutant, named by the mutant,
// with "key: value" lines (file, pkg, run, why, old, new). In old and new,
// \n and \t stand for a newline and a tab, and \\ for a backslash.
func Parse(s string) ([]Mutant, error) {
	var out []Mutant
	seen := map[string]bool{}
	for _, f := range txtar.Parse([]byte(s)).Files {
		m := Mutant{Name: f.Name}
		if seen[m.Name] {
			return nil, fmt.Errorf("mutant %q: defined twice", m.Name)
		}
		seen[m.Name] = true
		for _, line := range strings.Split(string(f.Data), "\n") {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				return nil, fmt.Errorf("mutant %q: line %q is not key: value", m.Name, line)
			}
			switch k {
			case "file":
				m.File = v
			case "pkg":
				m.Pkgs = strings.Fields(v)
			case "run":
				m.Run = v
			case "why":
				m.Why = v
			case "old":
				m.Old = unescape(v)
			case "new":
				m.New = unescape(v)
			default:
				return nil, fmt.Errorf("mutant %q: unknown key %q", m.Name, k)
			}
		}
		if m.File == "" || len(m.Pkgs) == 0 || m.Old == "" || m.Old == m.New {
			return nil, fmt.Errorf("mutant %q: needs file, pkg, and old different from new", m.Name)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, errors.New("no mutants")
	}
	return out, nil
}

func unescape(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t").Replace(s)
}

// Apply returns src with the mutant applied, or ok false when its text is
// not in src exactly once.
func (m Mutant) Apply(src string) (string, bool) {
	if strings.Count(src, m.Old) != 1 {
		return src, false
	}
	return strings.Replace(src, m.Old, m.New, 1), true
}

type runner struct {
	tree     string
	timeout  time.Duration
	out      io.Writer
	baseline map[string]bool   // key → the unmutated tests pass
	why      map[string]string // key → the tests that failed without the mutant
}

func (r *runner) run(ctx context.Context, m Mutant) (Outcome, string) {
	p := filepath.Join(r.tree, filepath.FromSlash(m.File))
	src, err := os.ReadFile(p)
	if err != nil {
		return Stale, err.Error()
	}
	mut, ok := m.Apply(string(src))
	if !ok {
		return Stale, fmt.Sprintf("%q is not in %s exactly once", m.Old, m.File)
	}
	key := strings.Join(m.Pkgs, " ") + " -run " + m.Run
	pass, seen := r.baseline[key]
	if !seen {
		var out string
		pass, _, out = r.goTest(ctx, m)
		r.baseline[key] = pass
		if !pass {
			if r.why == nil {
				r.why = map[string]string{}
			}
			r.why[key] = failedTests(out)
		}
	}
	if !pass {
		return Unproven, "the tests fail without the mutant: " + key + ": " + r.why[key]
	}
	if err := os.WriteFile(p, []byte(mut), 0o644); err != nil {
		return Invalid, err.Error()
	}
	defer os.WriteFile(p, src, 0o644)
	t0 := time.Now()
	pass, buildErr, out := r.goTest(ctx, m)
	took := time.Since(t0).Round(time.Second)
	switch {
	case buildErr:
		return Invalid, "does not compile: " + firstLine(out)
	case pass:
		return Survived, fmt.Sprintf("(%s, %s)", key, took)
	}
	return Killed, fmt.Sprintf("(%s) by %s", took, failedTests(out))
}

// goTest runs the mutant's tests in the copy. buildErr reports a package
// that did not compile.
func (r *runner) goTest(ctx context.Context, m Mutant) (pass, buildErr bool, out string) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	args := []string{"test", "-count=1"}
	if m.Run != "" {
		args = append(args, "-run", m.Run)
	}
	args = append(args, m.Pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = r.tree
	cmd.Env = append(os.Environ(), "CI=true")
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	out = b.String()
	if err == nil {
		return true, false, out
	}
	return false, strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"), out
}

func failedTests(out string) string {
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "--- FAIL: ") {
			names = append(names, strings.Fields(t)[2])
		}
	}
	if len(names) == 0 {
		return firstLine(out)
	}
	sort.Strings(names)
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	return strings.Join(names, ", ")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// copyRepo copies the files git knows (tracked, and untracked but not
// ignored) of the repository at root into a new temporary directory.
func copyRepo(root string) (string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return "", fmt.Errorf("list the repository's files (git ls-files): %w", err)
	}
	dst, err := os.MkdirTemp("", "fixpoint-mutation-")
	if err != nil {
		return "", err
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		src := filepath.Join(root, rel)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the work tree, or a symlink
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return dst, err
		}
		p := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return dst, err
		}
		if err := os.WriteFile(p, data, st.Mode().Perm()); err != nil {
			return dst, err
		}
	}
	return dst, nil
}
