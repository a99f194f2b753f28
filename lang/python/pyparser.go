package python

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// pythonServer wraps pythonChecker in a loop: it first reads the checker's
// source (a decimal length line, then the bytes), then answers requests of
// the same framing with one JSON line each. Every request runs the checker
// unchanged in a fresh namespace, with stdin set to the checked source and
// stdout captured, so both modes apply exactly the same rules. Like the
// checker, it only parses: the checked code is never executed.
const pythonServer = `
import io, json, sys
inp, outp = sys.stdin.buffer, sys.stdout
def frame():
    line = inp.readline()
    if not line: sys.exit(0)
    return inp.read(int(line))
code = compile(frame().decode(), "<policy>", "exec")
while True:
    src = frame()
    sys.stdin = io.TextIOWrapper(io.BytesIO(src))
    buf = sys.stdout = io.StringIO()
    err = None
    try:
        exec(code, {"__name__": "__policy__"})
    except SystemExit:
        pass
    except BaseException as e:
        err = "%s: %s" % (type(e).__name__, e)
    finally:
        sys.stdin, sys.stdout = inp, outp
    lines = buf.getvalue().strip().splitlines()
    if err is None and not lines: err = "no output"
    outp.write(json.dumps({"error": err}) if err else lines[-1])
    outp.write("\n"); outp.flush()
`

// Parser is one persistent python3 process that parses Python files
// for a Checker, instead of a new process per checked file (tens of
// milliseconds each: the interpreter's start dominates a check). Give the
// same Parser to every policy Checker that should share it
// (lang.PolicyOptions.Parser, agent/policy Options.Parser).
//
// It is safe for concurrent use; requests are answered one at a time. The
// process starts on the first request. When it dies (a crash on hostile
// input) or a request's context ends, it is killed and the next request
// starts a new one; the failed request returns an error, as a failed
// one-shot check does. Close stops it. A Parser does not outlive its
// parent: the process exits when its stdin closes.
type Parser struct {
	python string

	mu     sync.Mutex // guards proc and closed
	proc   *pyProc
	closed bool
}

type pyProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// NewParser returns a parser that runs python (the interpreter's
// path; "" means the system's: /usr/bin/python3, else python3 on PATH). It returns nil when no
// interpreter is found: a Checker with a nil Parser falls back to its
// per-file process or the token scanner.
func NewParser(python string) *Parser {
	if python == "" {
		python = SystemPython()
	}
	if python == "" {
		python, _ = exec.LookPath("python3")
	}
	if python == "" {
		return nil
	}
	return &Parser{python: python}
}

// NewPolicyParser returns a Parser for one batch of files
// ([lang.PolicyParsers]), nil when no interpreter is found.
func (Language) NewPolicyParser(python string) lang.ClosingPolicyParser {
	if p := NewParser(python); p != nil {
		return p
	}
	return nil
}

// ParsePolicy returns the policy findings of the Python source src
// ([lang.PolicyParser]).
func (p *Parser) ParsePolicy(ctx context.Context, src []byte) ([]lang.PolicyFinding, error) {
	pf, err := p.parse(ctx, src)
	if err != nil {
		return nil, err
	}
	return pyFindings(pf), nil
}

// Pid is the parser process's id, or 0 when none is running.
func (p *Parser) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil {
		return 0
	}
	return p.proc.cmd.Process.Pid
}

// ErrParserClosed is returned by a closed Parser.
var ErrParserClosed = errors.New("python parser closed")

// parse returns the findings of pythonChecker on src.
func (p *Parser) parse(ctx context.Context, src []byte) ([]pyFinding, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("python parser: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrParserClosed
	}
	if p.proc == nil {
		proc, err := startPyProc(p.python)
		if err != nil {
			return nil, err
		}
		p.proc = proc
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	proc := p.proc
	stop := context.AfterFunc(ctx, func() { _ = proc.cmd.Process.Kill() }) // the read below then fails
	line, err := proc.request(src)
	if !stop() || err != nil {
		p.stopLocked()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("python parser: %w", ctx.Err())
		}
		return nil, fmt.Errorf("python parser died: %w", err)
	}
	if strings.HasPrefix(line, `{"error"`) {
		var e struct{ Error string }
		if json.Unmarshal([]byte(line), &e) == nil {
			return nil, fmt.Errorf("python parser: %s", e.Error)
		}
	}
	var pf []pyFinding
	if err := json.Unmarshal([]byte(line), &pf); err != nil {
		return nil, fmt.Errorf("python parser output: %w", err)
	}
	return pf, nil
}

func startPyProc(python string) (*pyProc, error) {
	// -I: isolated (no user site, no PYTHON* env, no cwd on sys.path);
	// -S: no site module. Nothing from a workspace is imported.
	cmd := exec.Command(python, "-I", "-S", "-c", pythonServer)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("python parser: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("python parser: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start python parser %s: %w", python, err)
	}
	proc := &pyProc{cmd: cmd, in: in, out: bufio.NewReader(out)}
	if err := proc.send([]byte(pythonChecker)); err != nil {
		proc.kill()
		return nil, fmt.Errorf("start python parser %s: %w", python, err)
	}
	return proc, nil
}

func (p *pyProc) send(b []byte) error {
	if _, err := io.WriteString(p.in, strconv.Itoa(len(b))+"\n"); err != nil {
		return err
	}
	_, err := p.in.Write(b)
	return err
}

func (p *pyProc) request(src []byte) (string, error) {
	if err := p.send(src); err != nil {
		return "", err
	}
	line, err := p.out.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// kill stops the process and reaps it. Their errors say only that the
// process was already gone, or was killed: there is nothing to report.
func (p *pyProc) kill() {
	_ = p.in.Close()
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

func (p *Parser) stopLocked() {
	if p.proc != nil {
		p.proc.kill()
		p.proc = nil
	}
}

// Close stops the process. Later requests return ErrParserClosed. A nil
// Parser is fine.
func (p *Parser) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.proc == nil {
		return nil
	}
	_ = p.proc.in.Close() // the loop exits at EOF; Wait reports how it ended
	err := p.proc.cmd.Wait()
	p.proc = nil
	if err != nil {
		return fmt.Errorf("stop python parser: %w", err)
	}
	return nil
}
