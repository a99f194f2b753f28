// Package humaneval runs the HumanEval benchmark through fixpoint's repair
// loop and sandbox.
//
// [Load] reads the official jsonl(.gz). [Run] gives each [Problem] to a
// [Model] as a goal, assembles the check program exactly as the official
// evaluator does (prompt + completion + "\n" + test + "\n" +
// "check(entry_point)"), runs it with a [Checker] (warm sandbox sessions,
// a container per check, or a bare host process) and feeds failures back
// for up to Options.Attempts attempts. [Summary] holds the metrics.
package humaneval

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Problem is one HumanEval task.
type Problem struct {
	TaskID            string `json:"task_id"`
	Prompt            string `json:"prompt"`
	EntryPoint        string `json:"entry_point"`
	CanonicalSolution string `json:"canonical_solution"`
	Test              string `json:"test"`
}

// Load reads problems from a .jsonl or .jsonl.gz file.
func Load(path string) ([]Problem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open humaneval data: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	var out []Problem
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var p Problem
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if p.TaskID == "" || p.EntryPoint == "" || p.Test == "" {
			return nil, fmt.Errorf("%s:%d: not a HumanEval problem (task_id, entry_point and test are required)", path, n)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no problems", path)
	}
	return out, nil
}

// Program assembles the check program exactly as the official evaluator
// (human_eval/execution.py) does.
func Program(p Problem, completion string) string {
	return p.Prompt + completion + "\n" + p.Test + "\n" + "check(" + p.EntryPoint + ")"
}
