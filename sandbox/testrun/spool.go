package testrun

import "bytes"

// Bounds of a spool.
const (
	spoolVerbatim = maxInputScan // bytes kept as they came
	spoolResults  = 32 << 20     // bytes of result lines kept after that
)

// spool keeps what the parsers need of one output stream however long it
// runs: the first spoolVerbatim bytes as they came, then only the lines
// that carry results (keep: the Format's ResultLine), each cut at maxLine. Memory stays
// bounded while every test's outcome and the closing summary survive, so
// a long run is parsed in full even where the text shown to people and
// the model is cut at the sandbox's output cap. It is fed by the
// sandbox's full-stream writers (sandbox.Command.FullStdout).
type spool struct {
	keep    func(line []byte) bool // nil keeps nothing past the verbatim part
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
	if s.keep != nil && s.keep(line) && s.kept+len(line)+1 <= spoolResults {
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
