package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/fixpoint-dev/fixpoint/flock"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// A failed install step is remembered under the same key as a success
// (CacheKey: manifests, lockfiles, the script, the image, the project) and
// backend: the next run with those inputs reports the failure at once,
// with the log of the attempt, instead of repeating it (a minute of pip
// retries each time). Changed inputs are a new key, so they are tried;
// `--retry-setup` forgets the project's failures (ForgetFailures).
//
// The records live in the user's cache directory, one directory per
// project (the LabelProject hash; "none" without one):
//
//	setup-failures/<project>/<backend>-<key>.json   what failed, when
//	setup-failures/<project>/<backend>-<key>.log    the step's output

// failureLogCap bounds the kept output of one failed step.
const failureLogCap = 4 << 20

// failure is one remembered failed install step.
type failure struct {
	Step  string    `json:"step"`  // "npm ci"
	Error string    `json:"error"` // the error the attempt reported
	Time  time.Time `json:"time"`
}

// defaultFailureDir is where failed setups are remembered when
// Options.FailureDir is "".
func defaultFailureDir() string { return flock.Dir("setup-failures") }

var safeName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// failurePaths are the record and the log of one setup key; ok is false
// when a part is not a plain file name (nothing is remembered then).
func failurePaths(dir, project, backend, key string) (record, log string, ok bool) {
	if project == "" {
		project = "none"
	}
	for _, p := range []string{project, backend, key} {
		if !safeName.MatchString(p) || p == "." || p == ".." {
			return "", "", false
		}
	}
	base := filepath.Join(dir, project, backend+"-"+key)
	return base + ".json", base + ".log", true
}

// FailedSetupError reports an install step that failed before with the
// same inputs and was not run again. It wraps sandbox.ErrInstall.
type FailedSetupError struct {
	Step string    // "pip install -r requirements.txt"
	When time.Time // when it failed
	Log  string    // the failed attempt's output ("" when not kept)
	Err  string    // what that attempt reported
}

func (e *FailedSetupError) Error() string {
	msg := fmt.Sprintf("%s: %s failed on %s with the same inputs (manifests, lockfiles, setup command, image), so it was not run again: %s",
		sandbox.ErrInstall, e.Step, e.When.Local().Format("2006-01-02 15:04"), e.Err)
	if e.Log != "" {
		msg += "\nIts output: " + e.Log
	}
	return msg + "\nTo try again, fix the cause (the dependency files, or the network the install needs) or run with --retry-setup"
}

func (e *FailedSetupError) Unwrap() error { return sandbox.ErrInstall }

// recordedFailure returns the remembered failure of this key, nil when
// there is none (or it cannot be read).
func recordedFailure(record, log string) *FailedSetupError {
	b, err := os.ReadFile(record)
	if err != nil {
		return nil
	}
	var f failure
	if json.Unmarshal(b, &f) != nil || f.Step == "" {
		return nil
	}
	e := &FailedSetupError{Step: f.Step, When: f.Time, Err: f.Error}
	if _, err := os.Stat(log); err == nil {
		e.Log = log
	}
	return e
}

// failureLog collects a step's output for its record: the first
// failureLogCap bytes go to a temporary file next to the record.
type failureLog struct {
	f *os.File
	n int64
}

func newFailureLog(log string) *failureLog {
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		return &failureLog{}
	}
	f, err := os.CreateTemp(filepath.Dir(log), ".log-*")
	if err != nil {
		return &failureLog{}
	}
	return &failureLog{f: f}
}

func (l *failureLog) Write(p []byte) (int, error) {
	if l.f != nil && l.n < failureLogCap {
		q := p
		if rest := failureLogCap - l.n; int64(len(q)) > rest {
			q = q[:rest]
		}
		n, _ := l.f.Write(q)
		l.n += int64(n)
	}
	return len(p), nil
}

// keep writes the record of a failed step and moves its output to log;
// discard drops the output of a step that succeeded.
func (l *failureLog) keep(record, log string, f failure) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if l.f != nil {
		l.f.Close()
		if err := os.Rename(l.f.Name(), log); err != nil {
			os.Remove(l.f.Name())
		}
	}
	if err := os.MkdirAll(filepath.Dir(record), 0o700); err != nil {
		return err
	}
	tmp := record + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, record)
}

func (l *failureLog) discard() {
	if l.f != nil {
		l.f.Close()
		os.Remove(l.f.Name())
	}
}

// forget removes the record of one key (a success replaces a failure).
func forget(record, log string) {
	os.Remove(record)
	os.Remove(log)
}

// ForgetFailures forgets every remembered failed setup of a project (the
// LabelProject value of its sessions, "" for none), so that the next run
// tries them again (`--retry-setup`). dir "" is the default directory.
func ForgetFailures(dir, project string) error {
	if dir == "" {
		dir = defaultFailureDir()
	}
	if project == "" {
		project = "none"
	}
	if !safeName.MatchString(project) || project == "." || project == ".." {
		return fmt.Errorf("forget failed setups: bad project key %q", project)
	}
	if err := os.RemoveAll(filepath.Join(dir, project)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("forget failed setups: %w", err)
	}
	return nil
}

// teeOutput sends the step's output to w (when set) and to the log.
func teeOutput(w io.Writer, l *failureLog) io.Writer {
	if w == nil {
		return l
	}
	return io.MultiWriter(w, l)
}
