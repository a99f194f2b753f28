package judge

import "testing"

// TestShown: code counts as shown only inside its own file's sections
// (whole file or excerpt), as consecutive non-blank lines in order.
func TestShown(t *testing.T) {
	prompt := "## File: a.go\n```\nfunc A() {\n\n\treturn 1\n}\n```\n" +
		"## File: b.go (excerpt, lines 10-12)\n```\nfunc B() {\n\treturn 2\n}\n```\n"
	for _, tc := range []struct {
		path, code string
		want       bool
	}{
		{"a.go", "func A() {\n\treturn 1", true},    // blank lines aside
		{"b.go", "func B() {\n  return 2\n}", true}, // an excerpt, indentation aside
		{"a.go", "func B() {", false},               // another file's code
		{"a.go", "return 1\nfunc A() {", false},     // out of order
		{"c.go", "func A() {", false},               // a file the prompt does not show
	} {
		if got := Shown(prompt, tc.path, tc.code); got != tc.want {
			t.Errorf("Shown(%s, %q) = %v, want %v", tc.path, tc.code, got, tc.want)
		}
	}
}
