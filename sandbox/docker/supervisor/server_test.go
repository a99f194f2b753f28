package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/wire"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-exec" {
		execCommand(os.Args[2:])
		return
	}
	os.Exit(m.Run())
}

// peer is the host side of a supervisor running in-process on a temp dir
// (without -sweep, so it never signals processes outside its commands).
type peer struct {
	t    testing.TB
	srv  *server
	in   *io.PipeWriter
	out  *io.PipeReader
	root string
}

func startPeer(t testing.TB) *peer {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := newServer(root, self, false, outW)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serve(inR)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
	p := &peer{t: t, srv: s, in: inW, out: outR, root: root}
	if f := p.read(); f.Type != wire.Ready || string(f.Payload) != wire.Version {
		t.Fatalf("first frame = %q %q, want Ready", f.Type, f.Payload)
	}
	return p
}

func (p *peer) send(typ byte, v any) {
	p.t.Helper()
	var err error
	if b, ok := v.([]byte); ok {
		err = wire.Write(p.in, typ, b)
	} else {
		err = wire.WriteJSON(p.in, typ, v)
	}
	if err != nil {
		p.t.Fatal(err)
	}
}

func (p *peer) read() wire.Frame {
	p.t.Helper()
	f, err := wire.ReadFrame(p.out)
	if err != nil {
		p.t.Fatal(err)
	}
	return f
}

// run sends a Run and collects its output and exit status.
func (p *peer) run(req wire.RunRequest) (stdout, stderr string, st wire.ExitStatus) {
	p.t.Helper()
	if req.Env == nil {
		req.Env = []string{"PATH=" + os.Getenv("PATH")}
	}
	p.send(wire.Run, req)
	var o, e strings.Builder
	for {
		f := p.read()
		switch f.Type {
		case wire.Stdout:
			o.Write(f.Payload)
		case wire.Stderr:
			e.Write(f.Payload)
		case wire.Exit:
			if err := json.Unmarshal(f.Payload, &st); err != nil {
				p.t.Fatal(err)
			}
			return o.String(), e.String(), st
		default:
			p.t.Fatalf("Run(%q): frame %q %q", req.Args, f.Type, f.Payload)
		}
	}
}

func TestRunCommands(t *testing.T) {
	p := startPeer(t)
	tests := []struct {
		name      string
		req       wire.RunRequest
		wantOut   string
		wantErr   string
		wantCode  int
		wantTimed bool
		wantTrunc bool
	}{
		{name: "echo", req: wire.RunRequest{Args: []string{"echo", "hi"}}, wantOut: "hi\n"},
		{name: "exit code", req: wire.RunRequest{Args: []string{"sh", "-c", "echo e >&2; exit 7"}}, wantErr: "e\n", wantCode: 7},
		{name: "stdin", req: wire.RunRequest{Args: []string{"cat"}, Stdin: []byte("in")}, wantOut: "in"},
		{name: "env only as sent", req: wire.RunRequest{Args: []string{"sh", "-c", "echo ${HOME:-unset} $A"}, Env: []string{"PATH=" + os.Getenv("PATH"), "A=b"}}, wantOut: "unset b\n"},
		{name: "not found", req: wire.RunRequest{Args: []string{"no-such-cmd-xyz"}}, wantErr: "fixpoint: no-such-cmd-xyz: command not found\n", wantCode: 127},
		{name: "timeout kills the group", req: wire.RunRequest{Args: []string{"sh", "-c", "sleep 30 & sleep 30"}, TimeoutMS: 300}, wantCode: 124, wantTimed: true},
		{name: "cpu limit", req: wire.RunRequest{Args: []string{"sh", "-c", "while :; do :; done"}, CPUSec: 1, TimeoutMS: 20000}, wantCode: 124, wantTimed: true},
		{name: "file size limit", req: wire.RunRequest{Args: []string{"sh", "-c", "trap '' XFSZ; head -c 100000 /dev/zero > f; echo $?"}, FileSize: 1000}, wantOut: "1\n", wantErr: "head: error writing 'standard output': File too large\n"},
		{name: "output cap", req: wire.RunRequest{Args: []string{"sh", "-c", "yes | head -c 10000"}, OutputCap: 100}, wantOut: strings.Repeat("y\n", 50) + wire.TruncationMarker(100), wantTrunc: true},
		{name: "daemon does not hold the run", req: wire.RunRequest{Args: []string{"sh", "-c", "sleep 30 & echo bg"}, TimeoutMS: 10000}, wantOut: "bg\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, st := p.run(tt.req)
			if out != tt.wantOut || errOut != tt.wantErr || st.Code != tt.wantCode || st.TimedOut != tt.wantTimed || st.Truncated != tt.wantTrunc {
				t.Errorf("Run(%q) = %q %q %+v, want %q %q code %d timedOut %v truncated %v",
					tt.req.Args, out, errOut, st, tt.wantOut, tt.wantErr, tt.wantCode, tt.wantTimed, tt.wantTrunc)
			}
		})
	}
}

func TestKill(t *testing.T) {
	p := startPeer(t)
	p.send(wire.Run, wire.RunRequest{Args: []string{"sh", "-c", "echo started; sleep 30"}, Env: []string{"PATH=" + os.Getenv("PATH")}})
	if f := p.read(); f.Type != wire.Stdout || string(f.Payload) != "started\n" {
		t.Fatalf("first frame = %q %q", f.Type, f.Payload)
	}
	p.send(wire.Kill, []byte(nil))
	f := p.read()
	var st wire.ExitStatus
	json.Unmarshal(f.Payload, &st)
	if f.Type != wire.Exit || st.Code != 137 {
		t.Fatalf("after Kill: %q %+v, want Exit 137", f.Type, st)
	}
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// sync sends a manifest and the needed files, and returns what the
// supervisor asked for.
func (p *peer) sync(files map[string]string) (need wire.NeedReply, done wire.SyncReply) {
	p.t.Helper()
	var man wire.ManifestRequest
	for path, data := range files {
		man.Files = append(man.Files, wire.FileEntry{Path: path, Hash: hashOf(data), Mode: 0o644})
	}
	p.send(wire.Manifest, man)
	f := p.read()
	if f.Type != wire.Need {
		p.t.Fatalf("manifest reply %q %q", f.Type, f.Payload)
	}
	json.Unmarshal(f.Payload, &need)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, path := range need.Paths {
		tw.WriteHeader(&tar.Header{Name: path, Mode: 0o644, Size: int64(len(files[path])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[path]))
	}
	tw.Close()
	p.send(wire.TarChunk, buf.Bytes())
	p.send(wire.TarEnd, []byte(nil))
	f = p.read()
	if f.Type != wire.Synced {
		p.t.Fatalf("sync reply %q %q", f.Type, f.Payload)
	}
	json.Unmarshal(f.Payload, &done)
	return need, done
}

func TestSync(t *testing.T) {
	p := startPeer(t)
	need, done := p.sync(map[string]string{"a": "1", "d/b": "22"})
	if len(need.Paths) != 2 || done.Written != 2 || done.Bytes != 3 {
		t.Fatalf("first sync: need %+v done %+v", need, done)
	}
	need, done = p.sync(map[string]string{"a": "1", "d/b": "22"})
	if len(need.Paths) != 0 || done.Written != 0 {
		t.Fatalf("unchanged sync: need %+v done %+v", need, done)
	}
	os.WriteFile(filepath.Join(p.root, "a"), []byte("X"), 0o644) // a command changed it
	need, _ = p.sync(map[string]string{"a": "1"})
	if strings.Join(need.Paths, ",") != "a" || need.Deleted != 1 {
		t.Fatalf("sync after tampering and a delete: need %+v", need)
	}
	if _, err := os.Stat(filepath.Join(p.root, "d/b")); !os.IsNotExist(err) {
		t.Errorf("d/b still exists after it left the manifest: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(p.root, "a")); string(b) != "1" {
		t.Errorf("a = %q after sync, want 1", b)
	}
}

func TestSyncRejectsBadEntries(t *testing.T) {
	tests := []struct {
		name string
		hdr  tar.Header
	}{
		{name: "parent escape", hdr: tar.Header{Name: "../evil", Typeflag: tar.TypeReg}},
		{name: "absolute", hdr: tar.Header{Name: "/etc/evil", Typeflag: tar.TypeReg}},
		{name: "symlink absolute", hdr: tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}},
		{name: "symlink to the parent", hdr: tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: ".."}},
		{name: "symlink climbing out", hdr: tar.Header{Name: "a/b/link", Typeflag: tar.TypeSymlink, Linkname: "../../../etc"}},
		{name: "symlink empty", hdr: tar.Header{Name: "link", Typeflag: tar.TypeSymlink}},
		{name: "hard link", hdr: tar.Header{Name: "link", Typeflag: tar.TypeLink, Linkname: "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startPeer(t)
			p.send(wire.Manifest, wire.ManifestRequest{})
			p.read()
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			tw.WriteHeader(&tt.hdr)
			tw.Close()
			p.send(wire.TarChunk, buf.Bytes())
			p.send(wire.TarEnd, []byte(nil))
			if f := p.read(); f.Type != wire.Error {
				t.Errorf("tar entry %+v accepted: %q %q", tt.hdr, f.Type, f.Payload)
			}
		})
	}
}

// TestSyncSymlinks: a relative link inside the workspace is created, is
// left alone while unchanged, and is re-created after a command changed it.
func TestSyncSymlinks(t *testing.T) {
	p := startPeer(t)
	linkHash := hashOf("link:../data/x.json")
	send := func() wire.NeedReply {
		p.send(wire.Manifest, wire.ManifestRequest{Files: []wire.FileEntry{{Path: "test/x.json", Hash: linkHash, Mode: 0o777}}})
		var need wire.NeedReply
		json.Unmarshal(p.read().Payload, &need)
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, path := range need.Paths {
			tw.WriteHeader(&tar.Header{Name: path, Typeflag: tar.TypeSymlink, Linkname: "../data/x.json", Mode: 0o777})
		}
		tw.Close()
		p.send(wire.TarChunk, buf.Bytes())
		p.send(wire.TarEnd, []byte(nil))
		if f := p.read(); f.Type != wire.Synced {
			t.Fatalf("sync reply %q %q", f.Type, f.Payload)
		}
		return need
	}
	if need := send(); len(need.Paths) != 1 {
		t.Fatalf("first sync needs %q, want the link", need.Paths)
	}
	link := filepath.Join(p.root, "test", "x.json")
	if target, err := os.Readlink(link); err != nil || target != "../data/x.json" {
		t.Fatalf("Readlink = %q, %v", target, err)
	}
	if need := send(); len(need.Paths) != 0 {
		t.Errorf("unchanged link re-sent: %q", need.Paths)
	}
	os.Remove(link)
	os.Symlink("elsewhere", link) // a command retargeted it
	if need := send(); len(need.Paths) != 1 {
		t.Errorf("retargeted link not re-sent: %q", need.Paths)
	}
	if target, _ := os.Readlink(link); target != "../data/x.json" {
		t.Errorf("link points to %q after sync", target)
	}
}

func TestReadFile(t *testing.T) {
	p := startPeer(t)
	os.WriteFile(filepath.Join(p.root, "r.txt"), []byte("data"), 0o644)
	tests := []struct {
		path     string
		wantType byte
		want     string
	}{
		{"r.txt", wire.Data, "data"},
		{"missing", wire.Error, "no such file or directory"},
		{"../x", wire.Error, "outside the workspace"},
		{"/etc/passwd", wire.Error, "invalid path"},
		{".", wire.Error, "not a regular file"},
	}
	for _, tt := range tests {
		p.send(wire.Read, []byte(tt.path))
		f := p.read()
		if f.Type != tt.wantType || !strings.Contains(string(f.Payload), tt.want) {
			t.Errorf("Read(%q) = %q %q, want %q containing %q", tt.path, f.Type, f.Payload, tt.wantType, tt.want)
		}
	}
}

func TestRunBothStartPaths(t *testing.T) {
	for _, noPtrace := range []bool{false, true} {
		t.Run(fmt.Sprintf("noPtrace=%v", noPtrace), func(t *testing.T) {
			p := startPeer(t)
			p.srv.noPtrace = noPtrace
			out, _, st := p.run(wire.RunRequest{Args: []string{"sh", "-c", "ulimit -t; ulimit -n; ulimit -f; cat /proc/self/oom_score_adj"}, CPUSec: 7, NoFile: 99, FileSize: 512 * 1024})
			if want := "7\n99\n1024\n1000\n"; out != want || st.Code != 0 {
				t.Errorf("limits seen by the command = %q (exit %d), want %q", out, st.Code, want)
			}
		})
	}
}

func BenchmarkRunTrue(b *testing.B) {
	for _, noPtrace := range []bool{false, true} {
		b.Run(fmt.Sprintf("noPtrace=%v", noPtrace), func(b *testing.B) {
			p := startPeer(b)
			p.srv.noPtrace = noPtrace
			for b.Loop() {
				if _, _, st := p.run(wire.RunRequest{Args: []string{"true"}}); st.Code != 0 {
					b.Fatalf("true exited %d", st.Code)
				}
			}
		})
	}
}
