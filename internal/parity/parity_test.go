package parity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestParity runs `fixpoint test` with a cold setup cache on every corpus
// project in docker, except the Heavy ones unless FIXPOINT_PARITY_HEAVY=1,
// and compares the counts with the native run's.
func TestParity(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	for _, img := range []string{"fixpoint-sandbox-python", "fixpoint-sandbox-go", "fixpoint-sandbox-node"} {
		sandboxtest.RequireImage(t, cli, img)
	}
	sandboxtest.RequireCommand(t, "go")
	rw := filepath.Join("..", "..", "..", "shared", "realworld")
	if v := os.Getenv("FIXPOINT_REALWORLD"); v != "" {
		rw = v
	}
	if _, err := os.Stat(filepath.Join(rw, "README.md")); err != nil {
		if sandboxtest.InCI() {
			t.Fatalf("CI=true and the realworld corpus is missing at %s (set FIXPOINT_REALWORLD)", rw)
		}
		t.Skipf("skipping outside CI: no realworld corpus at %s (set FIXPOINT_REALWORLD)", rw)
	}
	for _, p := range Corpus(rw) {
		if p.Heavy && os.Getenv("FIXPOINT_PARITY_HEAVY") != "1" {
			continue // fixpoint bench parity, or FIXPOINT_PARITY_HEAVY=1 (docs/BENCHMARKS.md)
		}
		t.Run(p.Name, func(t *testing.T) {
			rows, err := Check(t.Context(), []Project{p}, &Options{Backends: []string{"docker"}, WorkDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			r := rows[0]
			t.Logf("%s: native %s (%s), fixpoint %s, setup cold %s, cached %s", p.Name, r.Project.Native, r.Project.NativeFrom,
				runCell(r.Docker), setupCell(r.Docker), setupCell(r.DockerWarm))
			if r.Docker.Err != "" {
				t.Fatalf("fixpoint test: %s", r.Docker.Err)
			}
			if !r.Match() {
				t.Errorf("fixpoint test reports %s, native %s", r.Docker.Counts, r.Project.Native)
			}
			if r.DockerWarm.Counts != r.Docker.Counts || !strings.Contains(setupCell(r.DockerWarm), "s") {
				t.Errorf("cached run reports %s (%s), cold %s", r.DockerWarm.Counts, r.DockerWarm.Err, r.Docker.Counts)
			}
			// KeptWarm fails unless its second run took the session started ahead.
			if r.DockerKept.Err != "" || r.DockerKept.Counts != r.Docker.Counts {
				t.Errorf("kept-warm run reports %s (%s), cold %s", r.DockerKept.Counts, r.DockerKept.Err, r.Docker.Counts)
			}
		})
	}
}

func TestTable(t *testing.T) {
	rows := []Row{
		{Project: Project{Name: "a", Native: Counts{3, 0, 1}, NativeTime: 1500 * 1e6, NativeFrom: "README"},
			Docker:     Run{Counts: Counts{3, 0, 1}, Wall: 5e9, TestTime: 2e9},
			DockerWarm: Run{Counts: Counts{3, 0, 1}, Wall: 2.5e9, TestTime: 2e9},
			DockerKept: Run{Counts: Counts{3, 0, 1}, Wall: 1.65e9, TestTime: 1.6e9},
			Bwrap:      Run{Err: "no | bwrap"}},
		{Project: Project{Name: "b", Native: Counts{1, 0, 0}, NativeFrom: "measured"}, Docker: Run{Counts: Counts{0, 1, 0}, Exit: 1}},
		{Project: Project{Name: "c", Native: Counts{2, 0, 0}, NativeTime: 8e9, NativeWarm: 1e9, NativeFrom: "measured"},
			Docker: Run{Counts: Counts{2, 0, 0}, Wall: 9e9, TestTime: 8e9}, DockerWarm: Run{Counts: Counts{2, 0, 0}, Wall: 1.5e9, TestTime: 1e9},
			DockerKept: Run{Err: "the second run did not take the session started ahead"}},
	}
	got := Table(rows)
	for _, want := range []string{
		"| a | 3/0/1 (README) | 1.5 s | 3/0/1 | 2.0 s | 3.0 s | 0.5 s | 2.5 s | 1.67× | 1.6 s (tests 1.6 s) | 1.10× | error: no \\| bwrap | yes |",
		"| b | 1/0/0 (measured) | – | 0/1/0 (exit 1) | – | – | – | – | – | – | – | – | **no** |",
		"| c | 2/0/0 (measured) | 8.0 s | 2/0/0 | 8.0 s | 1.0 s | 0.5 s | 1.5 s | 1.50× | error: the second run did not take the session started ahead | – | – | yes |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Table lacks\n%s\nin\n%s", want, got)
		}
	}
}
