package server

import "testing"

func TestGoalIn(t *testing.T) {
	tests := []struct {
		line, goal string
		ok         bool
	}{
		{line: "// fixpoint: add a Reverse function", goal: "add a Reverse function", ok: true},
		{line: "\t// TODO(fixpoint): handle empty input", goal: "handle empty input", ok: true},
		{line: "# fixpoint: parse dates", goal: "parse dates", ok: true},
		{line: "-- fixpoint: index the users table", goal: "index the users table", ok: true},
		{line: ";; fixpoint: fold the list", goal: "fold the list", ok: true},
		{line: "/* fixpoint: memoise fib */", goal: "memoise fib", ok: true},
		{line: " * TODO(fixpoint): continuation line", goal: "continuation line", ok: true},
		{line: "<!-- fixpoint: add alt text -->", goal: "add alt text", ok: true},
		{line: "// fixpoint:", ok: false},
		{line: "x := 1 // fixpoint: trailing comments are code lines", ok: false},
		{line: `s := "// fixpoint: in a string"`, ok: false},
		{line: "// fixpointy: nope", ok: false},
		{line: "// TODO: fixpoint: nope", ok: false},
	}
	for _, tt := range tests {
		goal, ok := goalIn(tt.line)
		if ok != tt.ok || goal != tt.goal {
			t.Errorf("goalIn(%q) = %q, %v; want %q, %v", tt.line, goal, ok, tt.goal, tt.ok)
		}
	}
}
