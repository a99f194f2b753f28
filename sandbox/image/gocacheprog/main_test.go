package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// session drives a server over an in-memory stream: the requests are
// written as the go command writes them, the responses parsed.
func session(t *testing.T, rw string, ros []string, input string) []response {
	t.Helper()
	var out bytes.Buffer
	s, err := newServer(rw, ros, strings.NewReader(input), &out)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.serve(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	var rs []response
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r response
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("response %q: %v", sc.Text(), err)
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 || len(rs[0].KnownCommands) != 3 {
		t.Fatalf("first response must announce get, put, close: %+v", rs)
	}
	return rs[1:]
}

// req renders a request as cmd/go does: its JSON, an empty line, then
// the body (when there is one) as a base64 JSON string.
func req(r request, body []byte) string {
	b, _ := json.Marshal(r)
	s := string(b) + "\n\n"
	if len(body) > 0 {
		s += `"` + base64.StdEncoding.EncodeToString(body) + "\"\n"
	}
	return s
}

func id(b byte) []byte { return bytes.Repeat([]byte{b}, hashSize) }

func sum(b []byte) []byte { h := sha256.Sum256(b); return h[:] }

// files lists every file under dir (relative paths).
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestPutThenGetFromTheWritableLayer(t *testing.T) {
	rw, ro := t.TempDir(), t.TempDir()
	body := []byte("compiled package")
	rs := session(t, rw, []string{ro},
		req(request{ID: 1, Command: "put", ActionID: id(1), OutputID: sum(body), BodySize: int64(len(body))}, body)+
			req(request{ID: 2, Command: "get", ActionID: id(1)}, nil)+
			req(request{ID: 3, Command: "put", ActionID: id(2), OutputID: sum(nil)}, nil)+
			req(request{ID: 4, Command: "get", ActionID: id(2)}, nil)+
			req(request{ID: 5, Command: "close"}, nil))
	if len(rs) != 5 {
		t.Fatalf("responses: %+v", rs)
	}
	for _, r := range rs[:4] {
		if r.Err != "" || r.Miss {
			t.Fatalf("response %d: %+v", r.ID, r)
		}
	}
	if !strings.HasPrefix(rs[1].DiskPath, rw+string(filepath.Separator)) || rs[1].Size != int64(len(body)) {
		t.Fatalf("get after put: %+v, want a DiskPath under %s", rs[1], rw)
	}
	if got, _ := os.ReadFile(rs[1].DiskPath); !bytes.Equal(got, body) {
		t.Fatalf("DiskPath holds %q", got)
	}
	if rs[3].Size != 0 || rs[3].DiskPath == "" {
		t.Fatalf("empty output: %+v", rs[3])
	}
	if got := files(t, ro); len(got) != 0 {
		t.Fatalf("the read-only layer was written: %v", got)
	}
	for _, f := range files(t, rw) {
		if strings.Contains(f, ".tmp-") {
			t.Fatalf("temporary file left: %s", f)
		}
	}
}

// TestGetFallsBackToTheReadOnlyLayer: an entry only the image's layer has
// is served from it (its DiskPath is there), and the writable layer's
// entry for the same action wins over it.
func TestGetFallsBackToTheReadOnlyLayer(t *testing.T) {
	ro, rw := t.TempDir(), t.TempDir()
	body := []byte("std")
	session(t, ro, nil, req(request{ID: 1, Command: "put", ActionID: id(7), OutputID: sum(body), BodySize: 3}, body))
	rs := session(t, rw, []string{ro}, req(request{ID: 1, Command: "get", ActionID: id(7)}, nil)+
		req(request{ID: 2, Command: "get", ActionID: id(8)}, nil))
	if rs[0].Miss || !strings.HasPrefix(rs[0].DiskPath, ro+string(filepath.Separator)) {
		t.Fatalf("get of an image entry: %+v, want a hit under %s", rs[0], ro)
	}
	if !rs[1].Miss {
		t.Fatalf("get of an unknown action: %+v, want a miss", rs[1])
	}
	if got := files(t, rw); len(got) != 0 {
		t.Fatalf("a get wrote the writable layer: %v", got)
	}
	other := []byte("session's")
	rs = session(t, rw, []string{ro}, req(request{ID: 1, Command: "put", ActionID: id(7), OutputID: sum(other), BodySize: int64(len(other))}, other)+
		req(request{ID: 2, Command: "get", ActionID: id(7)}, nil))
	if !bytes.Equal(rs[1].OutputID, sum(other)) || !strings.HasPrefix(rs[1].DiskPath, rw) {
		t.Fatalf("the writable layer's entry must win: %+v", rs[1])
	}
}

// TestHostileRequests: requests that name paths, lie about sizes or
// hashes, or come with oversized bodies are refused, write nothing, and
// leave the stream in step (the next request is answered).
func TestHostileRequests(t *testing.T) {
	rw, ro := t.TempDir(), t.TempDir()
	body := []byte("payload")
	dotdot := []byte("../../../../../../../../tmp/evil-")
	cases := []struct {
		name string
		in   string
	}{
		{"short action ID", req(request{ID: 1, Command: "put", ActionID: []byte{1}, OutputID: sum(body), BodySize: 7}, body)},
		{"path as action ID", req(request{ID: 1, Command: "get", ActionID: dotdot}, nil)},
		{"path as output ID", req(request{ID: 1, Command: "put", ActionID: id(3), OutputID: append(dotdot, 0), BodySize: 7}, body)},
		{"body not the output", req(request{ID: 1, Command: "put", ActionID: id(3), OutputID: sum([]byte("other")), BodySize: 7}, body)},
		{"negative size", req(request{ID: 1, Command: "put", ActionID: id(3), OutputID: sum(body), BodySize: -1}, nil)},
		{"size over the limit", req(request{ID: 1, Command: "put", ActionID: id(3), OutputID: sum(body), BodySize: maxBody + 1}, body)},
	}
	for _, c := range cases {
		rs := session(t, rw, []string{ro}, c.in+req(request{ID: 2, Command: "get", ActionID: id(9)}, nil))
		if len(rs) != 2 || rs[0].Err == "" || !rs[1].Miss || rs[1].ID != 2 {
			t.Errorf("%s: responses %+v, want an error then the next request answered", c.name, rs)
		}
		if got := files(t, rw); len(got) != 0 {
			t.Errorf("%s: wrote %v", c.name, got)
		}
	}
	if _, err := os.Stat("/tmp/evil-"); err == nil {
		t.Fatal("a request wrote /tmp/evil-")
	}
	// A body longer than its BodySize ends the stream: nothing after it
	// can be trusted to be in step.
	var out bytes.Buffer
	s, _ := newServer(rw, nil, strings.NewReader(req(request{ID: 1, Command: "put", ActionID: id(3), OutputID: sum(body[:3]), BodySize: 3}, body)), &out)
	if err := s.serve(); err == nil {
		t.Fatal("a body longer than its BodySize was accepted")
	}
}

// TestNoWriteThroughSymlinks: a writable cache whose subdirectory is a
// symlink out of it (planted by code that ran in a session) cannot make
// the helper write outside it, and a read-only layer's output that is a
// symlink is a miss.
func TestNoWriteThroughSymlinks(t *testing.T) {
	rw, outside := t.TempDir(), t.TempDir()
	body := []byte("x")
	sub := name(sum(body), "d")[:2]
	if err := os.Symlink(outside, filepath.Join(rw, sub)); err != nil {
		t.Fatal(err)
	}
	rs := session(t, rw, nil, req(request{ID: 1, Command: "put", ActionID: id(4), OutputID: sum(body), BodySize: 1}, body))
	if rs[0].Err == "" {
		t.Fatalf("put through a symlinked directory: %+v, want an error", rs[0])
	}
	if got := files(t, outside); len(got) != 0 {
		t.Fatalf("wrote outside the cache: %v", got)
	}

	ro, rw2 := t.TempDir(), t.TempDir()
	session(t, ro, nil, req(request{ID: 1, Command: "put", ActionID: id(5), OutputID: sum(body), BodySize: 1}, body))
	d := filepath.Join(ro, name(sum(body), "d"))
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, body, 0o644)
	os.Remove(d)
	if err := os.Symlink(secret, d); err != nil {
		t.Fatal(err)
	}
	rs = session(t, rw2, []string{ro}, req(request{ID: 1, Command: "get", ActionID: id(5)}, nil))
	if !rs[0].Miss {
		t.Fatalf("an output that is a symlink was served: %+v", rs[0])
	}
}

func TestWritableCacheMustBeAbsolute(t *testing.T) {
	for _, dir := range []string{"", "rel/cache"} {
		if _, err := newServer(dir, nil, strings.NewReader(""), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "GOCACHE") {
			t.Errorf("GOCACHE=%q: err %v, want one naming GOCACHE", dir, err)
		}
	}
}

// TestTheGoCommandUsesBothLayers runs the real go command with the helper
// as its GOCACHEPROG: a package compiled into the read-only layer (with a
// plain GOCACHE, as the image builder prebuilds it) is served from there,
// the layer is left as it was, and a changed package is compiled into the
// writable layer, where the next run finds it.
func TestTheGoCommandUsesBothLayers(t *testing.T) {
	goBin := filepath.Join(testGoRoot(t), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		t.Fatalf("no go command at %s: %v", goBin, err)
	}
	tmp := t.TempDir()
	helper := filepath.Join(tmp, "gocacheprog")
	if out, err := exec.Command(goBin, "build", "-o", helper, ".").CombinedOutput(); err != nil {
		t.Fatalf("build the helper: %v\n%s", err, out)
	}
	mod, ro, rw := filepath.Join(tmp, "mod"), filepath.Join(tmp, "ro"), filepath.Join(tmp, "rw")
	os.MkdirAll(mod, 0o755)
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module p\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "p.go"), []byte("package p\n\nfunc F() int { return 1 }\n"), 0o644)
	export := func(env ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, "list", "-export", "-f", "{{.Export}}", ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOENV=off", "GOPROXY=off", "CGO_ENABLED=0")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list %v: %v\n%s", env, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	prog := fmt.Sprintf("GOCACHEPROG=%s -ro %s", helper, ro)
	if p := export("GOCACHE="+ro, "GOCACHEPROG="); !strings.HasPrefix(p, ro) {
		t.Fatalf("prebuild: export %s not under %s", p, ro)
	}
	before := files(t, ro)
	if p := export("GOCACHE="+rw, prog); !strings.HasPrefix(p, ro+string(filepath.Separator)) {
		t.Fatalf("with the helper: export %s, want the read-only layer's (%s)", p, ro)
	}
	os.WriteFile(filepath.Join(mod, "p.go"), []byte("package p\n\nfunc F() int { return 2 }\n"), 0o644)
	if p := export("GOCACHE="+rw, prog); !strings.HasPrefix(p, rw+string(filepath.Separator)) {
		t.Fatalf("after a change: export %s, want the writable layer's (%s)", p, rw)
	}
	if after := files(t, ro); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("the read-only layer changed: %d files before, %d after", len(before), len(after))
	}
}

// TestPlantedEntriesMiss: what code in a session can plant in its own
// cache is never served as another thing. An output replaced by a
// symlink of the same size (to a file outside the cache) is a miss, not
// a DiskPath the go command reads through; an index entry copied under
// another action's name is a miss for that action, not the first
// action's output.
func TestPlantedEntriesMiss(t *testing.T) {
	rw := t.TempDir()
	// A symlink's own size is its target's length: the body is as long
	// as the secret's path, so that only the file-type check tells them
	// apart.
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("xyz"), 0o600); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("b"), len(secret))
	n := int64(len(body))
	session(t, rw, nil,
		req(request{ID: 1, Command: "put", ActionID: id(1), OutputID: sum(body), BodySize: n}, body)+
			req(request{ID: 2, Command: "put", ActionID: id(2), OutputID: sum(body), BodySize: n}, body))

	// The output both entries name, replaced by a symlink to the secret.
	out := filepath.Join(rw, filepath.FromSlash(name(sum(body), "d")))
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, out); err != nil {
		t.Fatal(err)
	}
	rs := session(t, rw, nil, req(request{ID: 1, Command: "get", ActionID: id(1)}, nil))
	if !rs[0].Miss || rs[0].DiskPath != "" {
		t.Fatalf("get of an action whose output is a symlink: %+v, want a miss", rs[0])
	}

	// Action 2's entry copied to action 3's name (the output restored).
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, body, 0o644); err != nil {
		t.Fatal(err)
	}
	entry, err := os.ReadFile(filepath.Join(rw, filepath.FromSlash(name(id(2), "a"))))
	if err != nil {
		t.Fatal(err)
	}
	third := filepath.Join(rw, filepath.FromSlash(name(id(3), "a")))
	os.MkdirAll(filepath.Dir(third), 0o755)
	if err := os.WriteFile(third, entry, 0o644); err != nil {
		t.Fatal(err)
	}
	rs = session(t, rw, nil, req(request{ID: 1, Command: "get", ActionID: id(2)}, nil)+
		req(request{ID: 2, Command: "get", ActionID: id(3)}, nil))
	if rs[0].Miss {
		t.Fatalf("get of action 2 after its output was restored: %+v, want a hit (else the test proves nothing)", rs[0])
	}
	if !rs[1].Miss || rs[1].DiskPath != "" {
		t.Fatalf("get of action 3, whose entry is action 2's copied: %+v, want a miss", rs[1])
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
