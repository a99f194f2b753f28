package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveProc is `fixpoint serve --listen` run in-process.
type serveProc struct {
	lines chan string // stderr, line by line
	code  chan int
}

func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	pr, pw := io.Pipe()
	home := t.TempDir()
	a := &app{
		stdin: strings.NewReader(""), stdout: io.Discard, stderr: pw,
		getenv: func(k string) string {
			return map[string]string{"HOME": home, "FIXPOINT_DATA_DIR": filepath.Join(home, "data")}[k]
		},
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	p := &serveProc{lines: make(chan string, 100), code: make(chan int, 1)}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		p.code <- run(ctx, a, append([]string{"serve"}, args...))
		pw.Close()
	}()
	t.Cleanup(cancel)
	return p
}

// line returns the next stderr line with prefix (its rest).
func (p *serveProc) line(t *testing.T, prefix string) string {
	t.Helper()
	for l := range p.lines {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return rest
		}
	}
	t.Fatalf("serve ended without a line %q", prefix)
	return ""
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

func initWithToken(token string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{},"initializationOptions":{"fixpointToken":"` + token + `"}}}`
}

// exchange sends raw on a new connection and returns all the server
// wrote back until it closed the connection or answered (a frame).
func exchange(t *testing.T, network, addr, raw string) (reply string, closed bool) {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		return "", true
	}
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	return string(buf[:n]), n == 0 && err != nil
}

// TestServeListenTCPToken: a TCP --listen writes a 0600 token file, and
// closes, before the language server reads anything, a connection whose
// first message lacks the token, carries a wrong one, is not initialize,
// or is an HTTP request (even one with the token in its body); then the
// client with the token is served.
func TestServeListenTCPToken(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "private", "token")
	p := startServe(t, "--listen", "127.0.0.1:0", "--token-file", tokenFile)
	addr := p.line(t, "fixpoint: listening on ")
	p.line(t, "fixpoint: token in "+tokenFile)
	data, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(data))
	if st, _ := os.Stat(tokenFile); len(token) != 64 || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %q mode %v, want 64 hex digits, 0600", token, st.Mode().Perm())
	}
	shutdown := `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
	rejected := []struct{ name, raw string }{
		{"no token", frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)},
		{"wrong token", frame(initWithToken(strings.Repeat("0", 64)))},
		{"token prefix", frame(initWithToken(token[:32]))},
		{"not initialize first", frame(shutdown)},
		{"HTTP request", "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
			fmt.Sprint(len(initWithToken(token))) + "\r\n\r\n" + initWithToken(token)},
		{"HTTP header after Content-Length", "Content-Length: 2\r\nHost: x\r\n\r\n{}"},
		{"LF only", strings.ReplaceAll(frame(initWithToken(token)), "\r\n", "\n")},
		{"not JSON", frame("{not json")},
		{"huge length", "Content-Length: 99999999\r\n\r\n{"},
	}
	for _, tt := range rejected {
		t.Run(tt.name, func(t *testing.T) {
			reply, closed := exchange(t, "tcp", addr, tt.raw)
			if !closed || reply != "" {
				t.Errorf("server answered %q (closed %v), want the connection closed with no reply", reply, closed)
			}
		})
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	io.WriteString(c, frame(initWithToken(token)))
	if got := readFrame(t, r); !strings.Contains(got, `"serverInfo"`) {
		t.Fatalf("initialize with the token = %s, want the server's result", got)
	}
	io.WriteString(c, frame(shutdown))
	readFrame(t, r)
	io.WriteString(c, frame(`{"jsonrpc":"2.0","method":"exit"}`))
	if code := <-p.code; code != exitOK {
		t.Errorf("serve exit = %d, want 0", code)
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Errorf("token file left behind: %v", err)
	}
}

func readFrame(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read header: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		fmt.Sscanf(line, "Content-Length: %d", &n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestServeListenUnix: unix:PATH makes the socket 0600 in a 0700
// directory it creates and serves the user's connection; a directory
// others may enter, or a path that is not a socket, is refused (exit 2).
func TestServeListenUnix(t *testing.T) {
	base := t.TempDir()
	sock := filepath.Join(base, "run", "lsp.sock")
	p := startServe(t, "--listen", "unix:"+sock)
	p.line(t, "fixpoint: listening on unix:")
	for path, want := range map[string]os.FileMode{filepath.Dir(sock): 0o700, sock: 0o600} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s: mode %v (%v), want %v", path, st.Mode().Perm(), err, want)
		}
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	io.WriteString(c, frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`))
	if got := readFrame(t, r); !strings.Contains(got, `"serverInfo"`) {
		t.Fatalf("initialize over the socket = %s", got)
	}
	c.Close()
	select {
	case <-p.code:
	case <-time.After(time.Minute):
		t.Fatal("serve did not end when the client left")
	}

	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	notSock := filepath.Join(base, "run", "file")
	os.WriteFile(notSock, nil, 0o600)
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(open, "lsp.sock"), "others may open"},
		{notSock, "is not a socket"},
		{"", "the path is empty"},
	} {
		var errb strings.Builder
		a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &errb, getenv: func(string) string { return "" },
			logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if code := run(t.Context(), a, []string{"serve", "--listen", "unix:" + tt.path}); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("serve --listen unix:%s = %d, %q; want exit 2 saying %q", tt.path, code, errb.String(), tt.want)
		}
	}
}

// TestServeListenRefusesNonLoopback: TCP on every interface is refused
// (the token would cross the network in clear), as is --token-file
// without a TCP --listen.
func TestServeListenRefusesNonLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "0.0.0.0:0"},
		{"serve", "--listen", ":0"},
		{"serve", "--token-file", "/tmp/x"},
		{"serve", "--listen", "unix:/tmp/x.sock", "--token-file", "/tmp/x"},
		{"serve", "--listen", "127.0.0.1:0", "--token-file", "/tmp/fixpoint-token"}, // others may write in /tmp
	} {
		var errb strings.Builder
		a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &errb, getenv: func(string) string { return "" },
			logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if code := run(t.Context(), a, args); code != exitUsage {
			t.Errorf("fixpoint %s = %d, %q; want exit 2", strings.Join(args, " "), code, errb.String())
		}
	}
}
