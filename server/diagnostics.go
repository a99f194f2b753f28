package server

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// fileText returns the current text of a workspace file as a line index:
// the open buffer, else the disk; nil when unreadable.
type fileText func(rel string) *lineIndex

// buildDiagnostics turns a test report into diagnostics per
// workspace-relative file: one per failed test with a location, at the
// failing assertion's line, with expected vs actual in the message and the
// other frames as related information. A table test whose cases fail at
// the same line gets one diagnostic per case, and every case (these, and
// subtests) points at its test function. Failures without a location are
// returned in unplaced.
func buildDiagnostics(rep *testrun.Report, text fileText, uriOf func(rel string) string) (byFile map[string][]protocol.Diagnostic, unplaced []testrun.Result) {
	byFile = map[string][]protocol.Diagnostic{}
	if rep == nil {
		return byFile, nil
	}
	for _, t := range rep.Failures() {
		if t.File == "" || t.Line <= 0 {
			unplaced = append(unplaced, t)
			continue
		}
		var related []protocol.DiagnosticRelatedInformation
		for _, f := range t.Frames {
			if f.File == "" || f.Line <= 0 || (f.File == t.File && f.Line == t.Line) {
				continue
			}
			msg := "called from here"
			if f.Func != "" {
				msg = "in " + f.Func
			}
			related = append(related, protocol.DiagnosticRelatedInformation{
				Location: protocol.Location{URI: uri.URI(uriOf(f.File)), Range: lineRange(text(f.File), f.Line-1)},
				Message:  msg,
			})
		}
		cases := caseMessages(t)
		if len(cases) > 0 {
			// One diagnostic per failing case, all on the assertion's line,
			// each pointing at the test: the second case is not hidden
			// behind the first.
			if decl, ok := testDecl(text(t.File), t, uriOf(t.File)); ok {
				related = append([]protocol.DiagnosticRelatedInformation{decl}, related...)
			}
			for i, m := range cases {
				c := t
				c.Message, c.Expected, c.Actual = m, "", ""
				d := protocol.Diagnostic{
					Range:              lineRange(text(t.File), t.Line-1),
					Severity:           protocol.DiagnosticSeverityError,
					Code:               t.ID,
					Source:             diagnosticSource,
					Message:            fmt.Sprintf("%s (case %d of %d)", failureMessage(c), i+1, len(cases)),
					RelatedInformation: related,
				}
				byFile[t.File] = append(byFile[t.File], d)
			}
			continue
		}
		if strings.Contains(t.Name, "/") { // a subtest: point at its test too
			if decl, ok := testDecl(text(t.File), t, uriOf(t.File)); ok {
				related = append([]protocol.DiagnosticRelatedInformation{decl}, related...)
			}
		}
		d := protocol.Diagnostic{
			Range:              lineRange(text(t.File), t.Line-1),
			Severity:           protocol.DiagnosticSeverityError,
			Code:               t.ID,
			Source:             diagnosticSource,
			Message:            failureMessage(t),
			RelatedInformation: related,
		}
		byFile[t.File] = append(byFile[t.File], d)
	}
	return byFile, unplaced
}

// caseLineRe is a test's log line "file:line: message" (Go's t.Errorf,
// pytest's "file.py:7: AssertionError"), indented or not.
var caseLineRe = regexp.MustCompile(`^\s*([^\s:]+):(\d+): (.+)$`)

// caseMessages returns the messages t printed at its own failing line
// when there are several: the cases of a table test that fail at the same
// assertion. With one message or none it returns nil (the result's own
// message says it all).
func caseMessages(t testrun.Result) []string {
	base := path.Base(filepath.ToSlash(t.File))
	want := strconv.Itoa(t.Line)
	var out []string
	for _, l := range strings.Split(t.Excerpt, "\n") {
		m := caseLineRe.FindStringSubmatch(l)
		if m != nil && path.Base(m[1]) == base && m[2] == want {
			out = append(out, strings.TrimSpace(m[3]))
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// testDecl finds the declaration of t's test function in its file (the
// nearest line above the assertion that names the test followed by "("),
// as related information "test TestX".
func testDecl(idx *lineIndex, t testrun.Result, u string) (protocol.DiagnosticRelatedInformation, bool) {
	name := t.Name
	if name == "" {
		name = t.ID
	}
	name, _, _ = strings.Cut(name, "/") // the parent of a subtest
	name, _, _ = strings.Cut(name, "[") // a parametrized case
	if i := strings.LastIndexAny(name, ".:"); i >= 0 {
		name = name[i+1:]
	}
	if idx == nil || name == "" {
		return protocol.DiagnosticRelatedInformation{}, false
	}
	for l := min(t.Line-2, idx.lines()-1); l >= 0; l-- {
		if strings.Contains(idx.lineText(l), name+"(") {
			return protocol.DiagnosticRelatedInformation{
				Location: protocol.Location{URI: uri.URI(u), Range: lineRange(idx, l)},
				Message:  "test " + t.Name,
			}, true
		}
	}
	return protocol.DiagnosticRelatedInformation{}, false
}

// failureMessage is "TestX: message\nexpected: e\nactual: a".
func failureMessage(t testrun.Result) string {
	name := t.Name
	if name == "" {
		name = t.ID
	}
	var b strings.Builder
	b.WriteString(name)
	if t.Status == testrun.StatusError {
		b.WriteString(" could not run")
	} else {
		b.WriteString(" failed")
	}
	if m := strings.TrimSpace(t.Message); m != "" {
		b.WriteString(": ")
		b.WriteString(m)
	}
	if t.Expected != "" || t.Actual != "" {
		fmt.Fprintf(&b, "\nexpected: %s\nactual:   %s", t.Expected, t.Actual)
	}
	return b.String()
}

// lineRange covers line l from its first non-blank character to its end.
func lineRange(idx *lineIndex, l int) protocol.Range {
	if l < 0 {
		l = 0
	}
	if idx == nil || l >= idx.lines() {
		return protocol.Range{Start: protocol.Position{Line: uint32(l)}, End: protocol.Position{Line: uint32(l)}}
	}
	line := idx.lineText(l)
	start := idx.starts[l] + (len(line) - len(strings.TrimLeft(line, " \t")))
	return protocol.Range{Start: idx.position(start), End: idx.position(idx.lineEnd(l))}
}

// publishReport publishes a report's diagnostics for a folder and clears
// the files that had fixpoint diagnostics before but have none now.
func (s *Server) publishReport(ctx context.Context, root string, rep *testrun.Report) {
	open := s.docs.under(root)
	uriOf := func(rel string) string {
		if d, ok := open[rel]; ok {
			return d.uri
		}
		return fileURI(filepath.Join(root, filepath.FromSlash(rel)))
	}
	text := func(rel string) *lineIndex {
		if d, ok := open[rel]; ok {
			return d.idx
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil
		}
		return newLineIndex(string(data))
	}
	byFile, unplaced := buildDiagnostics(rep, text, uriOf)
	now := map[string]bool{}
	rels := make([]string, 0, len(byFile))
	for rel := range byFile {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		u := uriOf(rel)
		now[u] = true
		s.publish(ctx, u, byFile[rel])
	}
	s.mu.Lock()
	before := s.published[root]
	s.published[root] = now
	s.mu.Unlock()
	var stale []string
	for u := range before {
		if !now[u] {
			stale = append(stale, u)
		}
	}
	sort.Strings(stale)
	for _, u := range stale {
		s.publish(ctx, u, []protocol.Diagnostic{}) // empty, not nil: nil is sent as null
	}
	for _, t := range unplaced {
		s.logMessage(ctx, protocol.MessageTypeWarning, failureMessage(t)+"\n"+t.Excerpt)
	}
}

// publish sends diags for u. Their messages quote the tests: they go
// through termsafe (an editor shows them as plain text).
func (s *Server) publish(ctx context.Context, u string, diags []protocol.Diagnostic) {
	for i := range diags {
		diags[i].Message = termsafe.Strip(diags[i].Message)
		if code, ok := diags[i].Code.(string); ok { // the test's id
			diags[i].Code = termsafe.Strip(code)
		}
		for j := range diags[i].RelatedInformation {
			diags[i].RelatedInformation[j].Message = termsafe.Strip(diags[i].RelatedInformation[j].Message)
		}
	}
	err := s.conn.Notify(context.WithoutCancel(ctx), protocol.MethodTextDocumentPublishDiagnostics,
		protocol.PublishDiagnosticsParams{URI: uri.URI(u), Diagnostics: diags})
	if err != nil {
		s.logger.Debug("publishDiagnostics", "err", err)
	}
}

// summary is a one-line test report summary: "3 passed, 1 failed".
func summary(rep *testrun.Report) string {
	if rep == nil {
		return "no test report"
	}
	parts := []string{fmt.Sprintf("%d passed", rep.Passed)}
	if rep.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", rep.Failed))
	}
	if rep.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", rep.Skipped))
	}
	if rep.TimedOut {
		parts = append(parts, "timed out")
	}
	if rep.OOM {
		parts = append(parts, "out of memory")
	}
	if rep.Failed == 0 && rep.ExitCode != 0 && !rep.TimedOut && !rep.OOM {
		parts = append(parts, fmt.Sprintf("exit code %d", rep.ExitCode))
	}
	return strings.Join(parts, ", ")
}
