package humaneval

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Summary is summary.json. The fields listed by the benchmark issue are
// always present.
type Summary struct {
	Problems      int       `json:"problems"`
	Passed        int       `json:"passed"` // after repair
	PassAt1       float64   `json:"pass_at_1"`
	PassByAttempt []float64 `json:"pass_by_attempt"` // cumulative pass rate after attempt i+1
	AttemptsMean  float64   `json:"attempts_mean"`
	TokensIn      int       `json:"tokens_in"`
	TokensOut     int       `json:"tokens_out"`
	WallSeconds   float64   `json:"wall_seconds"`
	// StartSeconds is the part of WallSeconds spent starting the warm
	// sandbox sessions, once for all problems.
	StartSeconds float64 `json:"session_start_seconds"`
	// LoopSeconds is the loop's own wall time when the baselines were
	// timed in turns with it (--baseline): what they compare against.
	LoopSeconds float64 `json:"loop_seconds,omitempty"`
	// UserLoop is the same loop without the benchmark's shortcuts (the
	// stub checked, a parser process per policy check), timed in the same
	// turns: what the shortcuts save.
	UserLoop       *Baseline `json:"user_loop,omitempty"`
	SandboxSeconds float64   `json:"sandbox_seconds"`
	ModelSeconds   float64   `json:"model_seconds"`
	Model          string    `json:"model"`
	Temperature    *float64  `json:"temperature"`
	Seed           *int      `json:"seed"`
	Attempts       int       `json:"attempts"`
	Parallel       int       `json:"parallel"`
	Checker        string    `json:"checker"` // "warm sessions (docker)", "container per check", "host"
	Version        string    `json:"fixpoint_version"`
	Date           string    `json:"date"`
	Data           string    `json:"data"`
	// Baselines holds the same check programs timed under other checkers
	// (no loop), when measured in the same run, by checker name.
	Baselines map[string]Baseline `json:"baselines,omitempty"`
}

// Baseline is one checker's run of the canonical check programs.
type Baseline struct {
	Seconds float64 `json:"wall_seconds"`
	Passed  int     `json:"passed"`
}

// Summarize computes the metrics of results. attempts is the configured
// maximum number of attempts.
func Summarize(results []ProblemResult, attempts int) *Summary {
	s := &Summary{Problems: len(results), Attempts: attempts, PassByAttempt: make([]float64, attempts)}
	if len(results) == 0 {
		return s
	}
	var sumAttempts int
	for _, r := range results {
		sumAttempts += r.Attempts
		s.TokensIn += r.TokensIn
		s.TokensOut += r.TokensOut
		s.SandboxSeconds += r.SandboxSeconds
		s.ModelSeconds += r.ModelSeconds
		if r.Passed {
			s.Passed++
			for i := r.PassedAt - 1; i < attempts; i++ {
				s.PassByAttempt[i]++
			}
		}
	}
	n := float64(len(results))
	for i := range s.PassByAttempt {
		s.PassByAttempt[i] /= n
	}
	s.PassAt1 = s.PassByAttempt[0]
	s.AttemptsMean = float64(sumAttempts) / n
	return s
}

// Write writes results.jsonl, summary.json, summary.md and pass_rate.svg
// into dir.
func Write(dir string, results []ProblemResult, s *Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output dir: %w", err)
	}
	var lines strings.Builder
	for _, r := range results {
		b, _ := json.Marshal(r)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	sj, _ := json.MarshalIndent(s, "", "  ")
	files := map[string]string{
		"results.jsonl": lines.String(),
		"summary.json":  string(sj) + "\n",
		"summary.md":    s.Markdown(),
		"pass_rate.svg": s.SVG(),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// Markdown renders the summary as a report.
func (s *Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HumanEval: %s\n\n", s.Model)
	fmt.Fprintf(&b, "| metric | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| problems | %d |\n| passed after repair | %d (%.1f%%) |\n| pass@1 | %.1f%% |\n",
		s.Problems, s.Passed, pct(s.Passed, s.Problems), 100*s.PassAt1)
	for i, r := range s.PassByAttempt {
		fmt.Fprintf(&b, "| pass rate after attempt %d | %.1f%% |\n", i+1, 100*r)
	}
	fmt.Fprintf(&b, "| mean attempts | %.2f |\n| tokens in / out | %d / %d |\n", s.AttemptsMean, s.TokensIn, s.TokensOut)
	fmt.Fprintf(&b, "| wall time | %.2f s |\n| time in sandbox (sum over checks) | %.2f s |\n| time in model (sum) | %.2f s |\n",
		s.WallSeconds, s.SandboxSeconds, s.ModelSeconds)
	fmt.Fprintf(&b, "| checker | %s, parallel %d |\n", s.Checker, s.Parallel)
	for _, name := range slices.Sorted(maps.Keys(s.Baselines)) {
		bl := s.Baselines[name]
		fmt.Fprintf(&b, "| baseline: %s | %d/%d passed, %.2f s wall |\n", name, bl.Passed, s.Problems, bl.Seconds)
	}
	temp := "server default"
	if s.Temperature != nil {
		temp = fmt.Sprintf("%g", *s.Temperature)
	}
	seed := "none"
	if s.Seed != nil {
		seed = fmt.Sprintf("%d", *s.Seed)
	}
	fmt.Fprintf(&b, "\nModel %s, temperature %s, seed %s, fixpoint %s, %s.\n\n![pass rate by attempt](pass_rate.svg)\n",
		s.Model, temp, seed, s.Version, s.Date)
	return b.String()
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// SVG draws the cumulative pass rate by attempt as a bar chart.
func (s *Summary) SVG() string {
	const w, h, left, bottom, top = 420, 260, 50, 40, 30
	n := len(s.PassByAttempt)
	if n == 0 {
		n = 1
	}
	barW := (w - left - 20) / n
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">HumanEval pass rate by attempt (%s)</text>`+"\n", left, escape(s.Model))
	plotH := h - bottom - top
	for _, tick := range []int{0, 25, 50, 75, 100} {
		y := top + plotH - plotH*tick/100
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#ddd"/><text x="%d" y="%d" text-anchor="end">%d%%</text>`+"\n",
			left, w-20, y, y, left-6, y+4, tick)
	}
	for i, r := range s.PassByAttempt {
		bh := int(float64(plotH) * r)
		x := left + i*barW + barW/6
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#3b7dd8"/>`+"\n", x, top+plotH-bh, barW*2/3, bh)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%.1f%%</text>`+"\n", x+barW/3, top+plotH-bh-4, 100*r)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">attempt %d</text>`+"\n", x+barW/3, h-bottom+16, i+1)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func escape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}
