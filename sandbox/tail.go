package sandbox

import "bytes"

// TailBuffer keeps the last Max bytes written to it (8 KiB when Max is
// 0): the end of an install's or an image build's output, for the error
// that reports its failure. Not safe for concurrent writes.
type TailBuffer struct {
	Max int
	buf []byte
}

func (t *TailBuffer) Write(p []byte) (int, error) {
	max := t.Max
	if max <= 0 {
		max = 8 << 10
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-max:]...)
	}
	return len(p), nil
}

// String is what is kept, surrounding white space trimmed.
func (t *TailBuffer) String() string { return string(bytes.TrimSpace(t.buf)) }

// LastLines is the last n lines of what is kept.
func (t *TailBuffer) LastLines(n int) string {
	lines := bytes.Split(bytes.TrimRight(t.buf, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
