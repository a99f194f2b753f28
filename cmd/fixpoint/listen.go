package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fixpoint-dev/fixpoint/flock"
	"github.com/fixpoint-dev/fixpoint/internal/warmd"
)

// `fixpoint serve --listen` never accepts a connection that another local
// user could have made: whoever connects names the folders, the model
// endpoint and receives the code, so a connection must prove it is the
// user's.
//
//   - unix:PATH: the socket is 0600 in a directory that only the user may
//     open (made 0700 when missing, refused when someone else owns it or
//     others may enter it), and on Linux the peer's uid is checked too.
//   - HOST:PORT (TCP, loopback addresses only): a random token is written, 0600, to a file in the
//     user's private directory (or --token-file). The client's first
//     message must be an LSP frame (Content-Length header, at most
//     maxFirstFrame bytes, within firstFrameWait) holding an initialize
//     request whose initializationOptions.fixpointToken is the token.
//     Anything else (no token, a wrong one, an HTTP request, a frame
//     that is not JSON) closes the connection before the language server
//     reads a byte of it, and serve waits for the next connection.

const (
	maxFirstFrame  = 1 << 20
	firstFrameWait = 10 * time.Second
	maxHeaderBytes = 4096
)

// errRejected is a connection that did not prove it is the user's.
var errRejected = errors.New("connection rejected")

// listenOne listens on addr (unix:PATH or HOST:PORT) and returns the first
// connection that authenticates. tokenFile is where a TCP listener writes
// its token ("" = the user's private directory).
func listenOne(ctx context.Context, addr, tokenFile string, a *app) (net.Conn, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		return listenUnix(ctx, path, a)
	}
	return listenTCP(ctx, addr, tokenFile, a)
}

func listenUnix(ctx context.Context, path string, a *app) (net.Conn, error) {
	if path == "" {
		return nil, usagef("--listen unix:PATH: the path is empty")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, usagef("--listen unix:%s: %v", path, err)
	}
	if err := socketDir(filepath.Dir(path)); err != nil {
		return nil, usagef("--listen unix:%s: %v", path, err)
	}
	if st, err := os.Lstat(path); err == nil {
		if st.Mode().Type() != os.ModeSocket {
			return nil, usagef("--listen unix:%s: the path exists and is not a socket", path)
		}
		os.Remove(path) // a stale socket of an earlier serve
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, usagef("--listen unix:%s: %v", path, err)
	}
	defer os.Remove(path)
	defer ln.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("--listen unix:%s: %w", path, err)
	}
	fmt.Fprintf(a.stderr, "fixpoint: listening on unix:%s\n", path)
	return acceptFirst(ctx, ln, func(c net.Conn) (net.Conn, error) {
		if err := peerIsMe(c); err != nil {
			return nil, err
		}
		return c, nil
	}, a)
}

// socketDir makes dir (0700) when missing, and refuses one that another
// user owns or that others may enter: they could replace the socket.
func socketDir(dir string) error {
	return ownDir(dir, 0o077, "put the socket in a directory of yours that only you may open (e.g. $XDG_RUNTIME_DIR/fixpoint/lsp.sock)",
		"put the socket in a directory only you may open (chmod 700, or a new directory such as $XDG_RUNTIME_DIR/fixpoint/)")
}

// ownDir makes dir (0700) when missing and refuses one that another user
// owns or whose mode has any of the bits in forbid; the hints say what
// to do instead. Its mode is left alone otherwise.
func ownDir(dir string, forbid os.FileMode, ownerHint, modeHint string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you: %s", dir, sys.Uid, ownerHint)
	}
	if st.Mode().Perm()&forbid != 0 {
		verb := "open"
		if forbid&0o055 == 0 {
			verb = "write in"
		}
		return fmt.Errorf("others may %s %s (mode %v): %s", verb, dir, st.Mode().Perm(), modeHint)
	}
	return nil
}

func listenTCP(ctx context.Context, addr, tokenFile string, a *app) (net.Conn, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("--listen %s: %v", addr, err)
	}
	defer ln.Close()
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		// The token and the code would cross the network in clear text.
		return nil, usagef("--listen %s: TCP listens on a loopback address only (127.0.0.1:PORT, [::1]:PORT); for another machine forward it over SSH, or use --listen unix:PATH", addr)
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	dirCheck := tokenDir
	if tokenFile == "" {
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		tokenFile = filepath.Join(flock.Dir("serve"), "token-"+port)
		dirCheck = warmd.PrivateDir // fixpoint's own directory: made private
	}
	if err := dirCheck(filepath.Dir(tokenFile)); err != nil {
		return nil, usagef("--token-file %s: %v", tokenFile, err)
	}
	if err := writeToken(tokenFile, token); err != nil {
		return nil, fmt.Errorf("--listen %s: write the token: %w", addr, err)
	}
	defer os.Remove(tokenFile)
	fmt.Fprintf(a.stderr, "fixpoint: listening on %s\nfixpoint: token in %s: the client's initialize must carry it as initializationOptions.fixpointToken\n", ln.Addr(), tokenFile)
	return acceptFirst(ctx, ln, func(c net.Conn) (net.Conn, error) { return checkToken(c, token) }, a)
}

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// tokenDir makes a --token-file's directory (0700) when missing, and
// refuses one that another user owns or may write: they could swap the
// file. Its mode is left alone otherwise (a home directory stays 0755).
func tokenDir(dir string) error {
	return ownDir(dir, 0o022, "choose a directory of yours", "choose a directory of yours")
}

// writeToken writes the token 0600, replacing an old file (never writing
// through a link someone left there).
func writeToken(path, token string) error {
	os.Remove(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// acceptFirst accepts connections until one passes check (each checked in
// its own goroutine, so a silent one holds nothing up), and returns it.
func acceptFirst(ctx context.Context, ln net.Listener, check func(net.Conn) (net.Conn, error), a *app) (net.Conn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { <-ctx.Done(); ln.Close() }()
	won := make(chan net.Conn)
	errs := make(chan error, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				errs <- err
				return
			}
			go func() {
				ok, err := check(c)
				if err != nil {
					a.logger.Warn("serve: closed a connection that did not authenticate", "remote", c.RemoteAddr().String(), "err", err)
					c.Close()
					return
				}
				select {
				case won <- ok:
				case <-ctx.Done():
					c.Close()
				}
			}()
		}
	}()
	select {
	case c := <-won:
		return c, nil
	case err := <-errs:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("--listen %s: %w", ln.Addr(), err)
	}
}

// checkToken reads c's first frame and, when it is an initialize request
// carrying the token, returns c with that frame put back in front.
func checkToken(c net.Conn, token string) (net.Conn, error) {
	if err := c.SetReadDeadline(time.Now().Add(firstFrameWait)); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(c, maxHeaderBytes)
	frame, body, err := readFirstFrame(r)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			InitializationOptions struct {
				Token string `json:"fixpointToken"`
			} `json:"initializationOptions"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("%w: the first frame is not JSON", errRejected)
	}
	if msg.Method != "initialize" {
		return nil, fmt.Errorf("%w: the first message is %q, not initialize", errRejected, msg.Method)
	}
	if subtle.ConstantTimeCompare([]byte(msg.Params.InitializationOptions.Token), []byte(token)) != 1 {
		return nil, fmt.Errorf("%w: initializationOptions.fixpointToken is missing or wrong", errRejected)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return &replayConn{Conn: c, r: io.MultiReader(strings.NewReader(string(frame)), r)}, nil
}

// readFirstFrame reads one LSP frame strictly: header lines ending in
// CRLF, only Content-Length (required, at most maxFirstFrame) and
// Content-Type, then the body. It returns the frame's bytes and its body.
func readFirstFrame(r *bufio.Reader) (frame, body []byte, err error) {
	length := -1
	var head strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, nil, fmt.Errorf("%w: reading the header: %v", errRejected, err)
		}
		head.WriteString(line)
		if head.Len() > maxHeaderBytes {
			return nil, nil, fmt.Errorf("%w: header too long", errRejected)
		}
		if !strings.HasSuffix(line, "\r\n") {
			return nil, nil, fmt.Errorf("%w: a header line without CRLF", errRejected)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("%w: not an LSP header: %.40q", errRejected, line)
		case strings.EqualFold(name, "Content-Length"):
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 2 || n > maxFirstFrame || length >= 0 {
				return nil, nil, fmt.Errorf("%w: bad Content-Length %.20q", errRejected, value)
			}
			length = n
		case strings.EqualFold(name, "Content-Type"):
		default:
			return nil, nil, fmt.Errorf("%w: unexpected header %.40q", errRejected, name)
		}
	}
	if length < 0 {
		return nil, nil, fmt.Errorf("%w: no Content-Length", errRejected)
	}
	body = make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, nil, fmt.Errorf("%w: reading the body: %v", errRejected, err)
	}
	return append([]byte(head.String()), body...), body, nil
}

// replayConn reads r (the checked first frame, then the rest) instead of
// the connection.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }
