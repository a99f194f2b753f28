package prompt

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
)

// goCmpModule is the real Go module of the context benchmark, fetched
// through the module proxy (go mod download).
const goCmpModule = "github.com/google/go-cmp@v0.7.0"

// Cases are the projects of `fixpoint bench context`: the bundled
// examples with their own bugs, and real projects with a planted one-line
// bug. Paths are relative to the repository root, the working directory
// of `fixpoint bench`; dir holds unpacked copies (the cases read from it
// only).
func Cases(ctx context.Context, dir string) ([]Case, error) {
	for _, p := range []string{"examples/go-bug", "agent/testdata/py-bug", "agent/testdata/node-bug"} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("run from the repository root: %s not found", p)
		}
	}
	cases := []Case{
		{Name: "examples/go-bug (Go, bundled bug)", Source: "examples/go-bug", File: "stats/stats.go", Fix: demo.GoBugFix},
		{Name: "agent/testdata/py-bug (Python, bundled bug)", Source: "agent/testdata/py-bug", File: "textkit/chunks.py",
			Fix: "textkit/chunks.py\n<<<<<<< SEARCH\n    for i in range(0, len(seq) - size + 1, size):\n=======\n    for i in range(0, len(seq), size):\n>>>>>>> REPLACE\n"},
		{Name: "agent/testdata/node-bug (Node, bundled bug)", Source: "agent/testdata/node-bug", File: "src/clamp.js",
			Fix: "src/clamp.js\n<<<<<<< SEARCH\n  return Math.max(lo, Math.min(x, lo));\n=======\n  return Math.max(lo, Math.min(x, hi));\n>>>>>>> REPLACE\n"},
	}
	rw := filepath.Join("..", "shared", "realworld", "cachetools-7.0.6.tar.gz")
	if err := untar(ctx, rw, dir); err != nil {
		return nil, err
	}
	cases = append(cases, Case{
		Name: "cachetools 7.0.6 (Python, planted in LFUCache.popitem)", Source: filepath.Join(dir, "cachetools-7.0.6"),
		File:    "src/cachetools/__init__.py",
		Old:     "        curr = root.next\n        if curr is root:\n            raise KeyError(\"%s is empty\" % type(self).__name__) from None\n        key = next(iter(curr.keys))  # remove an arbitrary element\n",
		New:     "        curr = root.prev\n        if curr is root:\n            raise KeyError(\"%s is empty\" % type(self).__name__) from None\n        key = next(iter(curr.keys))  # remove an arbitrary element\n",
		TestCmd: "env PYTHONPATH=src python3 -m pytest -q",
	})
	cmp, err := goModuleCopy(ctx, goCmpModule, dir)
	if err != nil {
		return nil, err
	}
	cases = append(cases,
		Case{
			Name: "go-cmp v0.7.0 cmp (Go, 30-file package, planted in Path.Index)", Source: cmp, File: "cmp/path.go",
			Old: "\t\ti = len(pa) + i\n", New: "\t\ti = len(pa) - i\n",
		},
		Case{
			Name: "go-cmp v0.7.0 cmpopts (Go, planted in EquateApprox)", Source: cmp, File: "cmp/cmpopts/equate.go",
			Old: "\treturn math.Abs(x-y) <= math.Max(a.marg, relMarg)\n", New: "\treturn math.Abs(x-y) < math.Max(a.marg, relMarg)\n",
		},
	)
	return cases, nil
}

func untar(ctx context.Context, archive, dir string) error {
	if _, err := os.Stat(archive); err != nil {
		return fmt.Errorf("the real-world corpus is missing: %w (run from the repository root, next to ../shared)", err)
	}
	if out, err := exec.CommandContext(ctx, "tar", "-xzf", archive, "-C", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("tar -xzf %s: %v: %s", archive, err, out)
	}
	return nil
}

// goModuleCopy downloads a module through the Go module proxy and copies it
// (the module cache is read-only) into dir.
func goModuleCopy(ctx context.Context, mod, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", mod)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download -json %s: %v (needs the go command and the module proxy)", mod, err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download -json %s: no Dir in %q", mod, out)
	}
	dst := filepath.Join(dir, "go-cmp")
	if err := os.CopyFS(dst, os.DirFS(info.Dir)); err != nil {
		return "", err
	}
	return dst, filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	})
}

// Markdown renders the results of a run on the named backend for
// docs/BENCHMARKS.md, with the target of issue 14.
func Markdown(backend string, res []Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Each case runs `fixpoint fix` through the real loop on the %s backend (snapshot, baseline tests, prompts, edit, sandboxed tests) with a scripted model that replies with the correct fix; prompt bytes are system + user message per model request. \"In context\" means the file the fix edits was shown (whole, or as an excerpt around the lines the failure names) in every request.\n\n", backend)
	fmt.Fprintf(&b, "| case | files | requests (bytes each) | prompt bytes per run | file to edit in context | verified |\n|---|---|---|---|---|---|\n")
	for _, r := range res {
		var reqs []string
		for _, n := range r.Requests {
			reqs = append(reqs, fmt.Sprint(n))
		}
		in := "no"
		switch {
		case r.InContext && r.Whole:
			in = "yes, whole"
		case r.InContext:
			in = "yes, excerpt"
		}
		ver := "yes"
		if !r.Verified {
			ver = "no: " + r.StopReason
		}
		fmt.Fprintf(&b, "| %s | %d | %d (%s) | %d | %s | %s |\n", r.Case, r.Files, len(r.Requests), strings.Join(reqs, ", "), r.Total, in, ver)
	}
	worst, all := 0, true
	for _, r := range res {
		worst = max(worst, r.Total)
		all = all && r.InContext && r.Verified
	}
	fmt.Fprintf(&b, "\nTarget (issue 14): at most 48 KB (49 152 bytes) of prompt per verified run, and the file to edit in context in every case. Largest run: %d bytes; every case verified with the file in context: %v.\n", worst, all)
	return b.String()
}
