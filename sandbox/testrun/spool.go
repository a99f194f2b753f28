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
		if len(s.partial) == 0 {
			s.keepLine(p[:i]) // the common case: no copy
		} else {
			s.addPartial(p[:i])
			s.keepLine(s.partial)
			s.partial = s.partial[:0]
		}
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

// keepLine keeps a whole line (without its newline) when it carries a
// result, within the spool's bounds.
func (s *spool) keepLine(line []byte) {
	if len(line) > maxLine {
		s.dropped += int64(len(line) - maxLine)
		line = line[:maxLine]
	}
	line = bytes.TrimSuffix(line, []byte("\r"))
	if resultLine(line) && s.kept+len(line)+1 <= spoolResults {
		s.buf.Write(line)
		s.buf.WriteByte('\n')
		s.kept += len(line) + 1
		return
	}
	s.dropped += int64(len(line)) + 1
}

// Bytes returns what was kept, with a last unfinished line.
func (s *spool) Bytes() []byte {
	if s.over && len(s.partial) > 0 {
		s.keepLine(s.partial)
		s.partial = s.partial[:0]
	}
	return s.buf.Bytes()
}

var goFailOutRe = regexp.MustCompile(`"Output":"(?:\s*--- (?:FAIL|PASS|SKIP)|panic: |FAIL|ok  )`)

// unittest's verdicts after " ... ", and the starts of its summary lines.
var (
	unittestVerdicts = [][]byte{[]byte("ok"), []byte("FAIL"), []byte("ERROR"), []byte("skipped"), []byte("expected failure"), []byte("unexpected success")}
	unittestSummary  = [][]byte{[]byte("FAIL: "), []byte("ERROR: "), []byte("UNEXPECTED SUCCESS: "), []byte("Ran "), []byte("OK"), []byte("FAILED")}
)

var (
	libtestPrefixes = [][]byte{[]byte("test result: "), []byte("Running "), []byte("Doc-tests "), []byte("process didn't exit successfully")}
	libtestBlockRe  = regexp.MustCompile(`^running \d+ tests?\s*$`)
)

// libtestLine reports whether t (without leading blanks) is a line of
// libtest or cargo that the Rust parser needs to place results.
func libtestLine(t []byte) bool {
	for _, p := range libtestPrefixes {
		if bytes.HasPrefix(t, p) {
			return true
		}
	}
	if bytes.HasPrefix(t, []byte("test ")) && bytes.Contains(t, []byte(" ... ")) {
		return true
	}
	return t[0] == 'r' && libtestBlockRe.Match(t)
}

// resultLine reports whether a line carries a test's outcome or a
// summary in a format the parsers read: go test -json events (other than
// plain output), TAP results, subtests, plans and summaries, unittest's
// verbose results and summary. Cheap byte tests come first: a chatty
// suite's log lines pass through here, and a slow filter slows the tests.
func resultLine(l []byte) bool {
	t := bytes.TrimLeft(l, " \t")
	if len(t) == 0 {
		return false
	}
	switch t[0] {
	case '{':
		if !bytes.Contains(t, []byte(`"Action":"`)) {
			return false
		}
		return !bytes.Contains(t, []byte(`"Action":"output"`)) || goFailOutRe.Match(t)
	case 'o', 'n':
		if bytes.HasPrefix(t, []byte("ok")) || bytes.HasPrefix(t, []byte("not ok")) {
			return tapResultRe.Match(l)
		}
	case '#':
		return tapSubtestRe.Match(l) || tapSummaryRe.Match(bytes.TrimRight(t, " \r"))
	case 'T':
		if bytes.HasPrefix(t, []byte("TAP version")) {
			return true
		}
	case '1':
		if bytes.HasPrefix(t, []byte("1..")) {
			return true
		}
	case 'r', 't', 'R', 'D', 'p':
		// libtest (cargo test): its blocks, results and summaries, and
		// cargo's per-binary headers and crash lines, which tell the
		// blocks apart (read by lang/rust through Runner.Format).
		if libtestLine(t) {
			return true
		}
	}
	if len(t) == len(l) {
		for _, p := range unittestSummary {
			if bytes.HasPrefix(l, p) {
				return true
			}
		}
	}
	i := bytes.Index(l, []byte(" ... "))
	if i < 0 {
		return false
	}
	rest := l[i+5:]
	for _, v := range unittestVerdicts {
		if bytes.HasPrefix(rest, v) {
			return true
		}
	}
	return false
}
