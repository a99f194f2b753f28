package agent

import (
	"fmt"
	"sort"
	"strings"
)

// UnifiedDiff renders changes as a unified diff (git style, a/ and b/
// prefixes, 3 lines of context), files in path order.
func UnifiedDiff(changes []FileChange) string {
	cs := append([]FileChange(nil), changes...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].Path < cs[j].Path })
	var b strings.Builder
	for _, c := range cs {
		from, to := "a/"+c.Path, "b/"+c.Path
		if c.Created {
			from = "/dev/null"
		}
		if c.Deleted {
			to = "/dev/null"
		}
		fmt.Fprintf(&b, "diff --git a/%s b/%s\n", c.Path, c.Path)
		if c.Created {
			b.WriteString("new file mode 100644\n")
		}
		if c.Deleted {
			b.WriteString("deleted file mode 100644\n")
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
		b.WriteString(diffLines(splitLines(string(c.Before)), splitLines(string(c.After))))
	}
	return b.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
}

// lcsOps computes an edit script through a longest common subsequence
// table; very large inputs fall back to delete-all/insert-all.
func lcsOps(a, b []string) []diffOp {
	// Trim a common prefix and suffix first: edits are usually small.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for _, l := range a[:pre] {
		ops = append(ops, diffOp{' ', l})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma)*len(mb) > 4_000_000 {
		for _, l := range ma {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, diffOp{'+', l})
		}
	} else {
		n, m := len(ma), len(mb)
		t := make([][]int32, n+1)
		for i := range t {
			t[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					t[i][j] = t[i+1][j+1] + 1
				} else {
					t[i][j] = max(t[i+1][j], t[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, diffOp{' ', ma[i]})
				i++
				j++
			case j < m && (i == n || t[i][j+1] >= t[i+1][j]):
				ops = append(ops, diffOp{'+', mb[j]})
				j++
			default:
				ops = append(ops, diffOp{'-', ma[i]})
				i++
			}
		}
	}
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

func diffLines(a, b []string) string {
	ops := lcsOps(a, b)
	const ctx = 3
	var out strings.Builder
	i := 0
	for i < len(ops) {
		// Find the next change.
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-ctx, 0)
		end := i
		// Extend the hunk while changes are within 2*ctx of each other.
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			k := end
			for k < len(ops) && ops[k].kind == ' ' {
				k++
			}
			if k == len(ops) || k-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = k
		}
		// Line numbers of the hunk start.
		aLine, bLine := 1, 1
		for _, op := range ops[:start] {
			if op.kind != '+' {
				aLine++
			}
			if op.kind != '-' {
				bLine++
			}
		}
		var aN, bN int
		var body strings.Builder
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
			body.WriteByte(op.kind)
			body.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
		}
		if aN == 0 {
			aLine--
		}
		if bN == 0 {
			bLine--
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aLine, aN), hunkRange(bLine, bN))
		out.WriteString(body.String())
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
