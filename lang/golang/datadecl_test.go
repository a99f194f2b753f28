package golang

import "testing"

func TestDataDecl(t *testing.T) {
	for line, want := range map[string]bool{
		"type Conn struct {":          true,
		"const maxFrame = 125":        true,
		"var errBadOp = errors.New(":  true,
		"func (c *Conn) Next() int {": false,
		"func newConn() *Conn {":      false,
		"const (":                     false, // a group names nothing to rank
		"\tvar n int":                 false, // a local
	} {
		if got := (Language{}).DataDecl("ws/conn.go", line); got != want {
			t.Errorf("DataDecl(%q) = %v, want %v", line, got, want)
		}
	}
	if (Language{}).DataDecl("x.py", "type Conn struct {") {
		t.Errorf("DataDecl judged a file that is not Go")
	}
}
