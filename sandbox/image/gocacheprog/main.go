// Command gocacheprog is the go image's GOCACHEPROG: it serves the go
// command's build cache from two layers, so that a new sandbox session
// needs no copy of the image's prebuilt cache.
//
//	gocacheprog [-ro DIR]...
//
// A get is answered from the session's own cache ($GOCACHE, the writable
// volume the docker backend mounts there) first, then from each DIR (by
// default the directory "gocache" beside the executable: the image's
// prebuilt cache, which nothing in a session can write). A put is
// written only into $GOCACHE. Both layers use the go command's own cache
// layout (xx/<action>-a index entries, xx/<output>-d outputs), so a go run
// without this helper reads the session's cache unchanged.
//
// It speaks the protocol of cmd/go/internal/cacheprog (Go 1.24+): JSON
// requests on stdin, a put's body following its request as a base64 JSON
// string, JSON responses on stdout. Every path it opens is a hex name
// derived from a fixed-length ID, opened through an [os.Root] of its
// layer, so no request names a file outside the two caches; a put's body
// is streamed, bounded by maxBody, and kept only if its SHA-256 is the
// output ID the request claims.
//
// The source is compiled by the image builder with the toolchain it puts
// in the image (sandbox/image embeds this file); it uses the standard
// library only.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Limits on what a request may ask for.
const (
	// maxLine bounds one request's JSON line: a request holds two IDs.
	maxLine = 64 << 10
	// maxBody bounds one put's body (the largest cached output is a
	// linked executable of `go run` or `go tool`, tens of MB).
	maxBody = 1 << 30
	// hashSize is the length of an action or output ID.
	hashSize = 32
	// entrySize is the length of an index entry:
	// "v1 <action hex> <output hex> <size %20d> <time %20d>\n".
	entrySize = 2 + 1 + 2*hashSize + 1 + 2*hashSize + 1 + 20 + 1 + 20 + 1
)

// request and response mirror cmd/go/internal/cacheprog's Request and
// Response (the fields this helper uses).
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// layer is one cache directory, opened as a root.
type layer struct {
	dir  string // absolute
	root *os.Root
}

// server answers requests from in on out.
type server struct {
	rw  layer   // the session's cache: read first, the only one written
	ros []layer // read-only layers, in order
	in  *bufio.Reader
	out *bufio.Writer
}

func main() {
	var ros multiFlag
	flag.Var(&ros, "ro", "a read-only cache directory read after $GOCACHE (repeatable)")
	flag.Parse()
	if len(ros) == 0 {
		if exe, err := os.Executable(); err == nil {
			ros = append(ros, filepath.Join(filepath.Dir(exe), "gocache"))
		}
	}
	s, err := newServer(os.Getenv("GOCACHE"), ros, os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixpoint-gocacheprog:", err)
		os.Exit(2)
	}
	if err := s.serve(); err != nil {
		fmt.Fprintln(os.Stderr, "fixpoint-gocacheprog:", err)
		os.Exit(1)
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// newServer opens the writable cache rw ($GOCACHE: absolute, created if
// missing) and the read-only layers ros. A read-only layer that does not
// exist is skipped: a session still works, it only compiles more.
func newServer(rw string, ros []string, in io.Reader, out io.Writer) (*server, error) {
	if rw == "" || !filepath.IsAbs(rw) {
		return nil, fmt.Errorf("GOCACHE must be an absolute directory (got %q): it is the cache this helper writes", rw)
	}
	if err := os.MkdirAll(rw, 0o777); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(rw)
	if err != nil {
		return nil, err
	}
	s := &server{rw: layer{rw, root}, in: bufio.NewReaderSize(in, 64<<10), out: bufio.NewWriter(out)}
	for _, d := range ros {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("-ro %q: not an absolute directory", d)
		}
		if filepath.Clean(d) == filepath.Clean(rw) {
			continue
		}
		r, err := os.OpenRoot(d)
		if err != nil {
			continue
		}
		s.ros = append(s.ros, layer{d, r})
	}
	return s, nil
}

// serve announces the commands and answers requests until close or EOF.
func (s *server) serve() error {
	if err := s.reply(response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	for {
		req, err := s.readRequest()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch req.Command {
		case "get":
			err = s.reply(s.get(req))
		case "put":
			var res response
			res, err = s.put(req)
			if err == nil {
				err = s.reply(res)
			}
		case "close":
			return s.reply(response{ID: req.ID})
		default:
			err = s.reply(response{ID: req.ID, Err: fmt.Sprintf("unknown command %q", req.Command)})
		}
		if err != nil {
			return err
		}
	}
}

func (s *server) reply(r response) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.out.Write(b)
	s.out.WriteByte('\n')
	return s.out.Flush()
}

// readRequest reads one request line, skipping blank lines (the go
// command follows each request with an empty line).
func (s *server) readRequest() (request, error) {
	var req request
	if err := s.skipSpace(); err != nil {
		return req, err
	}
	var line []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return req, fmt.Errorf("request longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(line) > 0 {
			break
		}
		if err != nil {
			return req, err
		}
		break
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return req, fmt.Errorf("bad request: %v", err)
	}
	return req, nil
}

// skipSpace discards whitespace; io.EOF when the input ends.
func (s *server) skipSpace() error {
	for {
		c, err := s.in.ReadByte()
		if err != nil {
			return err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return s.in.UnreadByte()
	}
}

func validID(id []byte) bool { return len(id) == hashSize }

// name is the relative path of an ID's file of the given kind ("a" or
// "d"), as the go command's disk cache names it: only hex digits.
func name(id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return h[:2] + "/" + h + "-" + kind
}

// get looks the action up in the writable layer, then the read-only ones.
func (s *server) get(req request) response {
	miss := response{ID: req.ID, Miss: true}
	if !validID(req.ActionID) {
		return response{ID: req.ID, Err: "get: action ID must be 32 bytes"}
	}
	for _, l := range append([]layer{s.rw}, s.ros...) {
		if r, ok := l.lookup(req.ActionID); ok {
			r.ID = req.ID
			return r
		}
	}
	return miss
}

// lookup reads the index entry of action in l and checks that its output
// is a regular file of the recorded size; ok is false on any doubt.
func (l layer) lookup(action []byte) (response, bool) {
	f, err := l.root.Open(name(action, "a"))
	if err != nil {
		return response{}, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return response{}, false
	}
	buf := make([]byte, entrySize+1)
	n, _ := io.ReadFull(f, buf)
	out, size, t, ok := parseEntry(buf[:n], action)
	if !ok {
		return response{}, false
	}
	rel := name(out, "d")
	st, err := l.root.Lstat(rel)
	if err != nil || !st.Mode().IsRegular() || st.Size() != size {
		return response{}, false
	}
	return response{OutputID: out, Size: size, Time: &t, DiskPath: filepath.Join(l.dir, filepath.FromSlash(rel))}, true
}

// parseEntry parses an index entry written for action.
func parseEntry(e, action []byte) (out []byte, size int64, t time.Time, ok bool) {
	if len(e) != entrySize || !bytes.HasPrefix(e, []byte("v1 ")) || e[entrySize-1] != '\n' {
		return nil, 0, t, false
	}
	f := strings.Fields(string(e[:entrySize-1]))
	if len(f) != 5 {
		return nil, 0, t, false
	}
	a, err := hex.DecodeString(f[1])
	if err != nil || !bytes.Equal(a, action) {
		return nil, 0, t, false
	}
	out, err = hex.DecodeString(f[2])
	if err != nil || len(out) != hashSize {
		return nil, 0, t, false
	}
	size, err1 := strconv.ParseInt(f[3], 10, 64)
	ns, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || size < 0 || size > maxBody {
		return nil, 0, t, false
	}
	return out, size, time.Unix(0, ns), true
}

// put stores the request's body in the writable layer. Its error is one
// of the stream (the helper stops); a bad request is answered with Err
// after its body has been read, so the stream stays in step.
func (s *server) put(req request) (response, error) {
	var bad string
	switch {
	case !validID(req.ActionID) || !validID(req.OutputID):
		bad = "put: action and output IDs must be 32 bytes"
	case req.BodySize < 0 || req.BodySize > maxBody:
		bad = fmt.Sprintf("put: body size %d outside 0..%d", req.BodySize, int64(maxBody))
	}
	if bad != "" {
		if req.BodySize > 0 {
			if err := s.drainBody(); err != nil {
				return response{}, err
			}
		}
		return response{ID: req.ID, Err: bad}, nil
	}
	rel := name(req.OutputID, "d")
	tmp, err := s.rw.create(rel)
	if err != nil {
		if req.BodySize > 0 {
			if err := s.drainBody(); err != nil {
				return response{}, err
			}
		}
		return response{ID: req.ID, Err: "put: " + err.Error()}, nil
	}
	defer s.rw.root.Remove(tmp) // no-op once renamed
	f, err := s.rw.root.OpenFile(tmp, os.O_WRONLY, 0)
	if err != nil {
		return response{}, err
	}
	h := sha256.New()
	var n int64
	var werr error
	if req.BodySize > 0 {
		n, werr, err = s.readBody(io.MultiWriter(f, h), req.BodySize)
		if err != nil {
			f.Close()
			return response{}, err
		}
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	switch {
	case werr != nil:
		return response{ID: req.ID, Err: "put: " + werr.Error()}, nil
	case n != req.BodySize:
		return response{ID: req.ID, Err: fmt.Sprintf("put: body of %d bytes, request said %d", n, req.BodySize)}, nil
	case !bytes.Equal(h.Sum(nil), req.OutputID):
		return response{ID: req.ID, Err: "put: body does not hash to its output ID"}, nil
	}
	if err := s.rw.root.Rename(tmp, rel); err != nil {
		return response{ID: req.ID, Err: "put: " + err.Error()}, nil
	}
	now := time.Now()
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, req.BodySize, now.UnixNano())
	if err := s.rw.writeAtomic(name(req.ActionID, "a"), []byte(entry)); err != nil {
		return response{ID: req.ID, Err: "put: " + err.Error()}, nil
	}
	return response{ID: req.ID, OutputID: req.OutputID, Size: req.BodySize, Time: &now,
		DiskPath: filepath.Join(s.rw.dir, filepath.FromSlash(rel))}, nil
}

// readBody decodes a put's body (a JSON string of base64 following the
// request) into w; n counts the decoded bytes. werr is a failure to write
// (the body is still read to its end); err one of the stream.
func (s *server) readBody(w io.Writer, size int64) (n int64, werr, err error) {
	if err := s.skipSpace(); err != nil {
		return 0, nil, fmt.Errorf("put body: %w", noEOF(err))
	}
	if c, _ := s.in.ReadByte(); c != '"' {
		return 0, nil, errors.New("put body: not a JSON string")
	}
	enc := base64.StdEncoding.EncodedLen(int(size))
	dec := base64.NewDecoder(base64.StdEncoding, io.LimitReader(s.in, int64(enc)))
	buf := make([]byte, 32<<10)
	for {
		k, rerr := dec.Read(buf)
		if k > 0 {
			n += int64(k)
			if werr == nil {
				_, werr = w.Write(buf[:k])
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return n, werr, fmt.Errorf("put body: %w", noEOF(rerr))
		}
	}
	if c, err := s.in.ReadByte(); err != nil || c != '"' {
		return n, werr, errors.New("put body: longer than its BodySize")
	}
	return n, werr, nil
}

// drainBody reads and discards a body of unknown or refused size: the
// JSON string up to its closing quote (base64 holds no quote).
func (s *server) drainBody() error {
	if err := s.skipSpace(); err != nil {
		return fmt.Errorf("put body: %w", noEOF(err))
	}
	if c, _ := s.in.ReadByte(); c != '"' {
		return errors.New("put body: not a JSON string")
	}
	for {
		_, err := s.in.ReadSlice('"')
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return fmt.Errorf("put body: %w", noEOF(err))
		}
		return nil
	}
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// create makes a new temporary file beside rel (its directory created if
// needed) and returns its name.
func (l layer) create(rel string) (string, error) {
	dir := filepath.Dir(filepath.FromSlash(rel))
	if err := l.root.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	for range 10 {
		var b [8]byte
		rand.Read(b[:])
		tmp := filepath.Join(dir, ".tmp-"+hex.EncodeToString(b[:]))
		f, err := l.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return tmp, f.Close()
	}
	return "", errors.New("no temporary name free")
}

// writeAtomic writes data to rel through a temporary file and a rename,
// so a concurrent reader sees the old entry or the new one, never part.
func (l layer) writeAtomic(rel string, data []byte) error {
	tmp, err := l.create(rel)
	if err != nil {
		return err
	}
	defer l.root.Remove(tmp)
	if err := l.root.WriteFile(tmp, data, 0o666); err != nil {
		return err
	}
	return l.root.Rename(tmp, filepath.FromSlash(rel))
}
