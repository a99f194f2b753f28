package testrun

import (
	"bytes"
	"regexp"
)

// Bounds of a spool.
const (
	spoolVerbatim = maxInputScan // bytes kept as they came
	spoolResults  = 32 << 20     // bytes of result lines kept after that
)

// spool keeps what the parsers need of one output stream however long it
// runs: the first spoolVerbatim bytes as they came, then only the lines
// that carry results (resultLine), each cut at maxLine. Memory stays
// bounded while every test's outcome and the closing summary survive, so
// a long run is parsed in full even where the text shown to people and
// the model is cut at the sandbox's output cap. It is fed by the
// sandbox's full-stream writers (sandbox.Command.FullStdout).
type spool struct {
	buf     bytes.Buffer
	partial []byte // the current line, once past the verbatim part
	over    bool   // past the verbatim part
	kept    int    // bytes of result lines kept
	total   int64  // bytes written
	dropped int64  // bytes not kept
}

func (s *spool) Write(p []byte) (int, error) {
	n := len(p)
	s.total += int64(n)
	if !s.over {
		room := spoolVerbatim - s.buf.Len()
		if len(p) <= room {
			s.buf.Write(p)
			return n, nil
		}
		s.buf.Write(p[:room])
		p = p[room:]
		s.over = true
		// The unfinished last line goes through the filter like the rest.
		b := s.buf.Bytes()
		i := bytes.LastIndexByte(b, '\n')
		s.addPartial(b[i+1:])
		s.buf.Truncate(i + 1)
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.addPartial(p)
			break
		}
		s.addPartial(p[:i])
		s.endLine()
		p = p[i+1:]
	}
	return n, nil
}

func (s *spool) addPartial(p []byte) {
	if room := maxLine - len(s.partial); room < len(p) {
		s.dropped += int64(len(p) - max(room, 0))
		p = p[:max(room, 0)]
	}
	s.partial = append(s.partial, p...)
}

func (s *spool) endLine() {
	line := bytes.TrimSuffix(s.partial, []byte("\r"))
	if resultLine(line) && s.kept+len(line)+1 <= spoolResults {
		s.buf.Write(line)
		s.buf.WriteByte('\n')
		s.kept += len(line) + 1
	} else {
		s.dropped += int64(len(s.partial)) + 1
	}
	s.partial = s.partial[:0]
}

// Bytes returns what was kept, with a last unfinished line.
func (s *spool) Bytes() []byte {
	if s.over && len(s.partial) > 0 {
		s.endLine()
	}
	return s.buf.Bytes()
}

var (
	goEventRe        = regexp.MustCompile(`^\s*\{.*"Action":"`)
	goOutputRe       = regexp.MustCompile(`"Action":"output"`)
	goFailOutRe      = regexp.MustCompile(`"Output":"(?:\s*--- (?:FAIL|PASS|SKIP)|panic: |FAIL|ok  )`)
	unittestResultRe = regexp.MustCompile(`\.\.\. (?:ok|FAIL|ERROR|skipped|expected failure|unexpected success)\b|^(?:FAIL|ERROR): |^Ran \d+ tests? in |^(?:OK|FAILED)\b`)
)

// resultLine reports whether a line carries a test's outcome or a
// summary in a format the parsers read: go test -json events (other than
// plain output), TAP results, subtests, plans and summaries, unittest's
// verbose results and summary.
func resultLine(l []byte) bool {
	switch {
	case goEventRe.Match(l):
		return !goOutputRe.Match(l) || goFailOutRe.Match(l)
	case tapResultRe.Match(l), tapSubtestRe.Match(l):
		return true
	}
	t := bytes.TrimSpace(l)
	switch {
	case bytes.HasPrefix(t, []byte("TAP version")), bytes.HasPrefix(t, []byte("1..")):
		return true
	case tapSummaryRe.Match(t):
		return true
	}
	return unittestResultRe.Match(l)
}
