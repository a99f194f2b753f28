package testrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// ErrNoRunner is returned by Run for a Runner without a command: nothing
// in the workspace says how to run its tests and no test_cmd is set.
var ErrNoRunner = errors.New("no test command: set test_cmd in .fixpoint.toml")

// workDirer is implemented by sessions whose workspace is not at
// /workspace (the host and bubblewrap backends may use a temporary
// directory). Run uses it to make the paths in test output relative.
type workDirer interface {
	WorkDir() string
}

// Run runs r in sess under limits and parses the result. stream, when
// non-nil, receives the command's stdout and stderr as they are produced
// (for progress); writes to it are serialised. A test failure, a timeout
// and an out-of-memory kill are all a Report (see Report.TimedOut and
// Report.OOM); an error means the sandbox itself failed.
func Run(ctx context.Context, sess sandbox.Session, r Runner, limits sandbox.Limits, stream io.Writer) (*Report, error) {
	if len(r.Args) == 0 {
		if r.Missing != "" {
			return nil, fmt.Errorf("%w (%s)", ErrNoRunner, r.Missing)
		}
		return nil, ErrNoRunner
	}
	if wd, ok := sess.(workDirer); ok && r.Root == "" {
		r.Root = wd.WorkDir()
	}
	args := r.Args
	if r.ReportPath != "" {
		args = freshReport(r.ReportPath, args)
	}
	if r.TracePath != "" {
		args = freshReport(r.TracePath, args)
	}
	if r.StepShell != nil {
		args = r.StepShell.wrap(args)
	}
	if r.Git != nil {
		args = r.Git.WrapArgs(args)
	}
	// The parsers read the whole output from the spools; the cap applies
	// only to res, which keeps the text for people and the model.
	keep := resultLines(r.Format, r.Formats)
	fullOut, fullErr := &spool{keep: keep}, &spool{keep: keep}
	cmd := sandbox.Command{Args: args, Env: r.Env, Limits: limits, FullStdout: fullOut, FullStderr: fullErr}
	if stream != nil {
		w := &lockedWriter{w: stream}
		cmd.Stdout, cmd.Stderr = w, w
	}
	res, err := sess.Run(ctx, cmd)
	if err != nil {
		name := r.Name
		if name == "" && r.Format != nil {
			name = r.Format.Name
		}
		return nil, fmt.Errorf("run %s tests: %w", name, err)
	}
	shown := res
	if fullOut.total+fullErr.total > 0 { // a backend that fed the full streams
		whole := *res
		whole.Stdout, whole.Stderr = fullOut.Bytes(), fullErr.Bytes()
		res = &whole
	}
	var report []byte
	// A killed runner wrote no report, nor does one whose format says so
	// for its exit code (pytest's internal and usage errors); what is
	// there is not this run's, so it is not read.
	stale := res.TimedOut || res.OOMKilled || (r.Format != nil && r.Format.NoReport != nil && r.Format.NoReport(res.ExitCode))
	if r.ReportPath != "" && !stale {
		data, err := readReport(ctx, sess, r.ReportPath)
		if err == nil {
			report = data
		} else if ctx.Err() != nil {
			return nil, fmt.Errorf("read test report %s: %w", r.ReportPath, ctx.Err())
		}
	}
	rep := Parse(r, res, report)
	if r.TracePath != "" && !res.OOMKilled {
		// Removed before the command started: what is there is this run's.
		data, err := readReport(ctx, sess, r.TracePath)
		switch {
		case err == nil:
			root := r.Root
			if root == "" {
				root = "/workspace"
			}
			rep.Trace = &TraceFile{Root: root, Data: data}
		case ctx.Err() != nil:
			return nil, fmt.Errorf("read trace %s: %w", r.TracePath, ctx.Err())
		}
	}
	if rep.Timeout != nil {
		rep.Timeout.Limit = limits.Timeout
		rep.Timeout.Note = rep.Timeout.Sentence(rep)
	}
	if shown.Truncated {
		rep.OutputCut = &OutputCut{
			Cap:         limits.OutputCap,
			StdoutBytes: max(fullOut.total, int64(len(shown.Stdout))),
			StderrBytes: max(fullErr.total, int64(len(shown.Stderr))),
			Parsed:      ParsedFull,
		}
		switch {
		case fullOut.total+fullErr.total == 0:
			rep.OutputCut.Parsed = ParsedCut
		case fullOut.dropped+fullErr.dropped > 0:
			rep.OutputCut.Parsed = ParsedResultLines
		}
	}
	return rep, nil
}

// maxReport bounds a report file read back, far above real suites'.
const maxReport = 256 << 20

// readReport reads a report file back. A file larger than the session
// reads in one piece (the docker backend's limit is 8 MiB) is streamed
// through `cat` instead, so that a big suite's report is not lost.
func readReport(ctx context.Context, sess sandbox.Session, rel string) ([]byte, error) {
	data, err := sess.ReadFile(ctx, rel)
	if err == nil || errors.Is(err, fs.ErrNotExist) || ctx.Err() != nil {
		return data, err
	}
	var buf limitedBuffer
	res, cerr := sess.Run(ctx, sandbox.Command{Args: []string{"cat", "--", rel}, FullStdout: &buf, Limits: sandbox.Limits{Timeout: 2 * time.Minute}})
	switch {
	case cerr != nil:
		return nil, fmt.Errorf("read %s: %w (and by cat: %v)", rel, err, cerr)
	case res.ExitCode != 0 || buf.over || buf.Len() == 0:
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	return buf.Bytes(), nil
}

// limitedBuffer keeps up to maxReport bytes and notes when there was more.
type limitedBuffer struct {
	bytes.Buffer
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxReport {
		b.over = true
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// freshReport wraps args so that the report file of an earlier run is
// gone and its directory exists before the runner starts: jest does not
// create the directory of --outputFile, and a runner that dies before
// writing must not leave an old report to be read as this run's.
func freshReport(report string, args []string) []string {
	const script = `rm -f -- "$1" && mkdir -p -- "$(dirname -- "$1")" && shift && exec "$@"`
	return append([]string{"sh", "-c", script, "sh", report}, args...)
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
