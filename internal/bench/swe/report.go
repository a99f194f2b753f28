package swe

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Summary aggregates the results of one split.
type Summary struct {
	Split          string
	Instances      int
	Repos          int
	Reproduced     int
	Verified       int
	TargetInPrompt int
	Errors         int
	MedianPrompt   int     // bytes of the first prompt, median
	MedianRatio    float64 // wall / native, median over instances with a native time
	// MedianSandboxed is wall / Result.Sandboxed, median over the
	// instances where it was measured; 0 when none.
	MedianSandboxed float64
	// FullRuns and TargetedRuns are the runs of the whole suite and of
	// the failing tests only, summed over the instances that ran.
	FullRuns     int
	TargetedRuns int
}

// Summarize returns one summary per split present ("tuning", "heldout",
// then "" for instances with none), and one for all instances.
func Summarize(res []Result) []Summary {
	bySplit := map[string][]Result{}
	for _, r := range res {
		bySplit[r.Split] = append(bySplit[r.Split], r)
	}
	var out []Summary
	for _, s := range []string{"tuning", "heldout", ""} {
		if rs := bySplit[s]; len(rs) > 0 {
			out = append(out, summarize(s, rs))
		}
	}
	if len(out) > 1 {
		out = append(out, summarize("all", res))
	}
	return out
}

func summarize(split string, rs []Result) Summary {
	s := Summary{Split: split, Instances: len(rs)}
	repos := map[string]bool{}
	var prompts []int
	var ratios, sandboxed []float64
	for _, r := range rs {
		repos[r.Repo] = true
		if r.Error != "" {
			s.Errors++
			continue
		}
		if r.Reproduced {
			s.Reproduced++
		}
		if r.Verified {
			s.Verified++
		}
		if r.TargetInPrompt {
			s.TargetInPrompt++
		}
		prompts = append(prompts, r.PromptBytes)
		s.FullRuns += r.FullRuns
		s.TargetedRuns += r.TargetedRuns
		if r.Native > 0 {
			ratios = append(ratios, r.Wall/r.Native)
		}
		if r.Sandboxed > 0 {
			sandboxed = append(sandboxed, r.Wall/r.Sandboxed)
		}
	}
	s.Repos = len(repos)
	if len(prompts) > 0 {
		slices.Sort(prompts)
		s.MedianPrompt = prompts[len(prompts)/2]
	}
	if len(ratios) > 0 {
		sort.Float64s(ratios)
		s.MedianRatio = ratios[len(ratios)/2]
	}
	if len(sandboxed) > 0 {
		sort.Float64s(sandboxed)
		s.MedianSandboxed = sandboxed[len(sandboxed)/2]
	}
	return s
}

// Markdown renders the summaries and the per-instance table.
func Markdown(backend string, oracle bool, res []Result) string {
	var b strings.Builder
	who := "the configured model"
	if oracle {
		who = "the oracle (gold patch as the reply)"
	}
	if promptOnly(res) {
		who = "prompt only (the first prompt built and judged, no model asked: verified is not measured)"
	}
	fmt.Fprintf(&b, "Backend %s, %s.\n\n", backend, who)
	b.WriteString("| split | instances | repos | reproduced | verified | target in first prompt | median first prompt | median wall / native (2 runs) | median wall / sandboxed suite (2 runs, this run) | full suite runs | targeted runs | errors |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range Summarize(res) {
		name := s.Split
		if name == "" {
			name = "(none)"
		}
		ratio := "–"
		if s.MedianRatio > 0 {
			ratio = fmt.Sprintf("%.2f×", s.MedianRatio)
		}
		sratio := "–"
		if s.MedianSandboxed > 0 {
			sratio = fmt.Sprintf("%.2f×", s.MedianSandboxed)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %.1f KB | %s | %s | %d | %d | %d |\n", name, s.Instances, s.Repos,
			s.Reproduced, s.Verified, s.TargetInPrompt, float64(s.MedianPrompt)/1024, ratio, sratio, s.FullRuns, s.TargetedRuns, s.Errors)
	}
	b.WriteString("\n| instance | split | reproduced | verified | target in prompt | first prompt | requests | full runs | targeted runs | wall | phases (start / baseline / model / targeted / verify / end) | native ×2 | wall / native | sandboxed suite (before + after) | wall / sandboxed | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range res {
		note := r.Error
		if note == "" && len(r.Missing) > 0 {
			note = "not shown: " + strings.Join(r.Missing, ", ")
		}
		if note == "" && !r.Verified {
			note = r.StopReason
		}
		native, ratio := "–", "–"
		if r.Native > 0 {
			native = fmt.Sprintf("%.1fs", r.Native)
			ratio = fmt.Sprintf("%.2f×", r.Wall/r.Native)
		}
		sboxed, sratio := "–", "–"
		if r.Sandboxed > 0 {
			sboxed = fmt.Sprintf("%.1fs", r.Sandboxed)
			sratio = fmt.Sprintf("%.2f×", r.Wall/r.Sandboxed)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.1f KB | %d | %d | %d | %.1fs | %s | %s | %s | %s | %s | %s |\n", r.ID, r.Split,
			yes(r.Reproduced), yes(r.Verified), yes(r.TargetInPrompt), float64(r.PromptBytes)/1024, r.Requests, r.FullRuns, r.TargetedRuns, r.Wall, r.Phases, native, ratio, sboxed, sratio,
			strings.ReplaceAll(note, "|", "\\|"))
	}
	return b.String()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// promptOnly reports whether every result comes from a prompt-only run.
func promptOnly(res []Result) bool {
	for _, r := range res {
		if r.StopReason != stopPromptOnly {
			return false
		}
	}
	return len(res) > 0
}
