package attacks

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/txtar"
)

// The invariants a case can declare (README.md says what each checks).
const (
	invNotVerified        = "not-verified"
	invWorkspaceUnchanged = "workspace-unchanged"
	invProtectedUnchanged = "protected-unchanged"
	invNoKeyLeak          = "no-key-leak"
	invNoExfil            = "no-exfil"
	invUserModel          = "user-model"
	invNoHostWrite        = "no-host-write"
	invNoControlBytes     = "no-control-bytes"
	invNoLessonInjection  = "no-lesson-injection"
	invNoSecretLeak       = "no-secret-leak"
)

var knownInvariants = map[string]bool{
	invNotVerified: true, invWorkspaceUnchanged: true, invProtectedUnchanged: true,
	invNoKeyLeak: true, invNoExfil: true, invUserModel: true, invNoHostWrite: true,
	invNoControlBytes: true, invNoLessonInjection: true, invNoSecretLeak: true,
}

// alwaysChecked are checked in every case, declared or not: none of them
// can be legitimately broken by any run.
var alwaysChecked = []string{invNoKeyLeak, invNoExfil, invNoHostWrite, invUserModel}

// A step is one command of a case.
type step struct {
	Mode string // fix, solve, test, serve (stdio) or listen (serve --listen, driven by another local user)
	// Command is the LSP command of a serve step (fixpoint.fixTests by default).
	Command string
	// Args are extra flags of this CLI step ("fix --dry-run").
	Args []string
}

// Case is one parsed case file.
type Case struct {
	Name     string // set/file name without .txtar
	File     string
	Class    string
	Steps    []step
	Backends []string // docker, bwrap
	Expect   []string
	Goal     string
	Args     []string
	Env      []string
	Iter     int // --max-iterations; 0 = the number of replies
	Lessons  []string
	Secrets  []string
	Protect  []string
	Symlinks [][2]string // path, target
	NoGit    bool
	GitConf  [][2]string // git config key, value set in the workspace repository
	Exec     []string    // workspace files made executable
	Fresh    bool        // a workspace path of its own for every run (no cache shared with an earlier run)
	UserConf string
	Replies  []string
	Files    []txtar.File
}

var replyName = regexp.MustCompile(`^reply([0-9]+)$`)

// parseCase reads a case file. Section names starting with "@" are the
// harness's (replies, the user config); the others are workspace files.
func parseCase(file, name string) (*Case, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	ar := txtar.Parse(data)
	c := &Case{Name: name, File: file}
	for i, line := range strings.Split(string(ar.Comment), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: header line %q is not key: value", file, i+1, line)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if err := c.set(key, val); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, i+1, err)
		}
	}
	replies := map[int]string{}
	for _, f := range ar.Files {
		if m := replyName.FindStringSubmatch(f.Name); m != nil {
			n, _ := strconv.Atoi(m[1])
			replies[n] = string(f.Data)
			continue
		}
		if f.Name == "@user-config" {
			c.UserConf = string(f.Data)
			continue
		}
		if strings.HasPrefix(f.Name, "@") {
			return nil, fmt.Errorf("%s: unknown section %q", file, f.Name)
		}
		c.Files = append(c.Files, f)
	}
	for n := 1; n <= len(replies); n++ {
		r, ok := replies[n]
		if !ok {
			return nil, fmt.Errorf("%s: reply%d missing (replies are numbered 1, 2, ...)", file, n)
		}
		c.Replies = append(c.Replies, r)
	}
	if len(c.Steps) == 0 {
		return nil, fmt.Errorf("%s: no mode", file)
	}
	if c.Class == "" {
		return nil, fmt.Errorf("%s: no class", file)
	}
	if len(c.Expect) == 0 {
		return nil, fmt.Errorf("%s: no expect", file)
	}
	if len(c.Backends) == 0 {
		c.Backends = []string{"docker", "bwrap"}
	}
	for _, s := range c.Steps {
		if s.Mode == "solve" && c.Goal == "" {
			return nil, fmt.Errorf("%s: mode solve needs a goal", file)
		}
	}
	return c, nil
}

func (c *Case) set(key, val string) error {
	switch key {
	case "mode":
		for _, m := range strings.Split(val, ",") {
			m = strings.TrimSpace(m)
			mode, cmd, _ := strings.Cut(m, " ")
			switch mode {
			case "fix", "solve", "test":
			case "serve", "listen":
				if cmd == "" {
					cmd = "fixpoint.fixTests"
				}
			default:
				return fmt.Errorf("mode %q: want fix, solve, test, serve [command] or listen [command]", m)
			}
			st := step{Mode: mode}
			if mode == "serve" || mode == "listen" {
				st.Command = strings.TrimSpace(cmd)
			} else {
				st.Args = strings.Fields(cmd)
			}
			c.Steps = append(c.Steps, st)
		}
	case "class":
		c.Class = val
	case "backend":
		switch val {
		case "any":
			c.Backends = []string{"docker", "bwrap"}
		case "docker", "bwrap":
			c.Backends = []string{val}
		default:
			return fmt.Errorf("backend %q: want any, docker or bwrap", val)
		}
	case "expect":
		for _, e := range strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == ' ' }) {
			if !knownInvariants[e] {
				return fmt.Errorf("unknown invariant %q", e)
			}
			c.Expect = append(c.Expect, e)
		}
	case "goal":
		c.Goal = val
	case "args":
		c.Args = append(c.Args, strings.Fields(val)...)
	case "env":
		if !strings.Contains(val, "=") {
			return fmt.Errorf("env %q: want KEY=VALUE", val)
		}
		c.Env = append(c.Env, val)
	case "iterations":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return fmt.Errorf("iterations %q: want a positive number", val)
		}
		c.Iter = n
	case "lesson":
		c.Lessons = append(c.Lessons, val)
	case "secret":
		c.Secrets = append(c.Secrets, val)
	case "protect":
		c.Protect = append(c.Protect, strings.Fields(val)...)
	case "symlink":
		p, target, ok := strings.Cut(val, "->")
		if !ok {
			return fmt.Errorf("symlink %q: want path -> target", val)
		}
		c.Symlinks = append(c.Symlinks, [2]string{strings.TrimSpace(p), strings.TrimSpace(target)})
	case "git-config":
		k, v, ok := strings.Cut(val, "=")
		if !ok {
			return fmt.Errorf("git-config %q: want key=value", val)
		}
		c.GitConf = append(c.GitConf, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	case "exec":
		c.Exec = append(c.Exec, strings.Fields(val)...)
	case "git":
		c.NoGit = val == "false"
	case "fresh":
		c.Fresh = val == "true"
	default:
		return fmt.Errorf("unknown header key %q", key)
	}
	return nil
}

// expects reports whether inv is checked in c.
func (c *Case) expects(inv string) bool {
	for _, e := range c.Expect {
		if e == inv {
			return true
		}
	}
	for _, e := range alwaysChecked {
		if e == inv {
			return true
		}
	}
	return false
}

// loadCases reads every case of the sets, sorted by name.
func loadCases(sets ...string) ([]*Case, error) {
	var cases []*Case
	for _, set := range sets {
		files, err := filepath.Glob(filepath.Join(set, "*.txtar"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			name := set + "/" + strings.TrimSuffix(filepath.Base(f), ".txtar")
			c, err := parseCase(f, name)
			if err != nil {
				return nil, err
			}
			cases = append(cases, c)
		}
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases, nil
}
