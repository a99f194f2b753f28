package image

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoCacheProgSupported(t *testing.T) {
	for v, want := range map[string]bool{
		"go1.26.8": true, "go1.25": true, "go1.25rc1": false, "go1.24.3": false, "go1.22.12": false,
		"go1.100.0": true, "devel go1.26-abc": false, "": false, "go2.0": false,
	} {
		if got := GoCacheProgSupported(v); got != want {
			t.Errorf("GoCacheProgSupported(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestGoCacheProgLayout: the helper and the prebuilt cache are root's
// (a session's user cannot replace or write them), the helper's default
// read-only layer is that cache, and the writable GOCACHE is an empty
// directory of the sandbox user, so a new volume over it copies nothing.
func TestGoCacheProgLayout(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "gocacheprog")
	os.WriteFile(prog, []byte("binary"), 0o644)
	es, err := goCacheProgEntries(prog)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]entry{}
	for _, e := range es {
		byName["/"+e.Name] = e
	}
	h, ok := byName[GoCacheProgPath]
	if !ok || h.UID != 0 || h.GID != 0 || h.Mode != 0o755 || string(h.Data) != "binary" {
		t.Errorf("helper entry %+v, want root's, 0755, the built binary", h)
	}
	if d := byName[filepath.Dir(GoCacheProgPath)]; !d.Dir || d.UID != 0 || d.Mode&0o022 != 0 {
		t.Errorf("helper directory %+v, want root's and not writable by others", d)
	}
	if c := byName[GoCacheDir]; !c.Dir || c.UID != UID || len(c.Data) != 0 {
		t.Errorf("GOCACHE entry %+v, want an empty directory of the sandbox user", c)
	}
	if filepath.Join(filepath.Dir(GoCacheProgPath), "gocache") != GoCacheImageDir {
		t.Errorf("the helper reads gocache beside it by default, not %s", GoCacheImageDir)
	}
	if strings.HasPrefix(GoCacheImageDir, GoCacheDir+"/") || strings.HasPrefix(GoCacheProgPath, GoCacheDir+"/") {
		t.Errorf("the read-only cache and the helper must be outside the mounted cache %s", GoCacheDir)
	}
}

// TestBuildGoCacheProg: the embedded source builds on its own with the
// toolchain the image gets (no module, no network) into a static program
// that speaks the protocol's first line.
func TestBuildGoCacheProg(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "gocacheprog")
	if err := buildGoCacheProg(t.Context(), testGoRoot(t), prog); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog)
	cmd.Env = []string{"GOCACHE=" + filepath.Join(dir, "cache")}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var hello struct{ KnownCommands []string }
	if err := json.Unmarshal(line, &hello); err != nil || strings.Join(hello.KnownCommands, ",") != "get,put,close" {
		t.Fatalf("first line %q (%v), want the known commands get, put, close", line, err)
	}
	in.Close()
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper exit on EOF: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "cache")); err != nil || !fi.IsDir() {
		t.Fatalf("the helper did not make its GOCACHE: %v", err)
	}
}

// testGoRoot is the GOROOT of the go command on PATH (runtime.GOROOT is
// deprecated: the root the test binary was built with).
func testGoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}
