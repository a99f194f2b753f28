package parity

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestBigWorkspaceHelper is `fixpoint test` in a process of its own, for
// TestBigWorkspace: it prints the run and its own peak RSS as JSON. It
// does nothing unless FIXPOINT_PARITY_BIG is set.
func TestBigWorkspaceHelper(t *testing.T) {
	dir := os.Getenv("FIXPOINT_PARITY_BIG")
	if dir == "" {
		return
	}
	r := Test(t.Context(), dir, "bwrap")
	out, err := json.Marshal(struct {
		Run
		PeakKB int
	}{r, peakRSS(t)})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("result %s\n", out)
}

// peakRSS is this process's peak resident set size in KiB (VmHWM).
func peakRSS(t *testing.T) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("VmHWM: %q", rest)
			}
			return kb
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// TestBigWorkspace: `fixpoint test` on a workspace of 100,000 files, of
// which a 300 MB gitignored bundle and 100,000 ignored small files,
// never reads what is ignored: its peak RSS stays under 100 MB, it
// reports the project's own test, and the user's files are unchanged.
func TestBigWorkspace(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	// bwrap runs the host's /usr: Debian's python3 and pytest.
	if out, err := exec.Command("/usr/bin/python3", "-m", "pytest", "--version").CombinedOutput(); err != nil {
		if sandboxtest.InCI() {
			t.Fatalf("CI=true and /usr/bin/python3 has no pytest (apt-get install python3-pytest): %s", out)
		}
		t.Skipf("skipping outside CI: /usr/bin/python3 has no pytest: %s", out)
	}
	dir := t.TempDir()
	files := map[string]string{
		".gitignore": "dist/\n*.log\n",
		"calc.py":    "def add(a, b):\n    return a + b\n",
		"test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n" +
			"def test_neg():\n    assert add(-1, 1) == 0\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// 300 MB that is never read: a sparse file costs no disk.
	if err := os.MkdirAll(filepath.Join(dir, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	bundle, err := os.Create(filepath.Join(dir, "dist", "bundle.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.Truncate(300 << 20); err != nil {
		t.Fatal(err)
	}
	if err := bundle.Close(); err != nil {
		t.Fatal(err)
	}
	// 100,000 ignored small files in directories that are not ignored: the
	// walk lists them and must not read or keep them.
	for i := range 100_000 {
		sub := filepath.Join(dir, "logs", fmt.Sprintf("%03d", i%1000))
		if i < 1000 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("run-%d.log", i)), []byte("ok\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := treeSum(t, dir)

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBigWorkspaceHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "FIXPOINT_PARITY_BIG="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fixpoint test: %v\n%s", err, out)
	}
	var res struct {
		Run
		PeakKB int
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "result "); ok {
			if err := json.Unmarshal([]byte(rest), &res); err != nil {
				t.Fatalf("helper result %q: %v", rest, err)
			}
		}
	}
	if res.PeakKB == 0 {
		t.Fatalf("helper printed no result:\n%s", out)
	}
	t.Logf("fixpoint test: %s in %s, peak RSS %d MB", runCell(res.Run), res.Wall, res.PeakKB>>10)
	if res.Err != "" || res.Counts != (Counts{2, 0, 0}) {
		t.Errorf("fixpoint test = %s (err %q), want 2/0/0", res.Counts, res.Err)
	}
	if res.PeakKB >= 100<<10 {
		t.Errorf("peak RSS = %d MB, want under 100 MB", res.PeakKB>>10)
	}
	if after := treeSum(t, dir); after != before {
		t.Errorf("fixpoint test changed the workspace")
	}
}

// treeSum hashes the names, sizes and modes of every file under dir, and
// the content of the small ones.
func treeSum(t *testing.T, dir string) string {
	h := sha256.New()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %v\n", p, info.Size(), info.Mode())
		if info.Mode().IsRegular() && info.Size() < 1<<10 {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
