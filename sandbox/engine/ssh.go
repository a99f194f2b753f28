package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// sshCommand is the ssh client; a variable so a test can substitute it.
var sshCommand = "ssh"

// dialSSH connects to the engine behind an ssh:// address the way the
// docker CLI's connhelper does: `ssh [-l USER] [-p PORT] -- HOST docker
// system dial-stdio`, the command's stdin and stdout being the connection.
// (github.com/docker/cli is not in our module graph, so this is the same
// mechanism in a few lines rather than that package.)
func dialSSH(ctx context.Context, u *url.URL) (net.Conn, error) {
	if u.Hostname() == "" {
		return nil, fmt.Errorf("engine address %q has no host; use ssh://user@host", u.Redacted())
	}
	if u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("engine address %q: a path is not supported in ssh:// addresses", u.Redacted())
	}
	args := []string{"-o", "ConnectTimeout=10", "-o", "BatchMode=yes"}
	if u.User != nil && u.User.Username() != "" {
		args = append(args, "-l", u.User.Username())
	}
	if p := u.Port(); p != "" {
		args = append(args, "-p", p)
	}
	args = append(args, "--", u.Hostname(), "docker", "system", "dial-stdio")
	if err := ctx.Err(); err != nil { // a dial already given up starts no ssh
		return nil, err
	}
	// Not CommandContext: the connection outlives the dial's context.
	cmd := exec.Command(sshCommand, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &cmdConn{cmd: cmd, stdin: stdin, stdout: stdout}
	cmd.Stderr = &c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("engine over ssh: start %s: %w", sshCommand, err)
	}
	return c, nil
}

// cmdConn is a net.Conn over a command's stdin and stdout.
type cmdConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr lockedBuffer
	once   sync.Once
}

func (c *cmdConn) Read(p []byte) (int, error) {
	n, err := c.stdout.Read(p)
	if err == io.EOF && n == 0 {
		if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
			return 0, fmt.Errorf("engine over ssh (%s): %s", strings.Join(c.cmd.Args, " "), msg)
		}
	}
	return n, err
}

func (c *cmdConn) Write(p []byte) (int, error) { return c.stdin.Write(p) }

func (c *cmdConn) Close() error {
	c.once.Do(func() {
		c.stdin.Close()
		if c.cmd.Process != nil {
			c.cmd.Process.Kill()
		}
		c.cmd.Wait()
	})
	return nil
}

func (c *cmdConn) LocalAddr() net.Addr                { return dummyAddr{} }
func (c *cmdConn) RemoteAddr() net.Addr               { return dummyAddr{} }
func (c *cmdConn) SetDeadline(t time.Time) error      { return nil }
func (c *cmdConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *cmdConn) SetWriteDeadline(t time.Time) error { return nil }

type dummyAddr struct{}

func (dummyAddr) Network() string { return "ssh" }
func (dummyAddr) String() string  { return "ssh" }

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 4096 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
