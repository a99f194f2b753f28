package python

import "testing"

func TestFooterLines(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      int
	}{
		{"guard with else", "g = None\n\ndef main():\n\tpass\n\n\nif __name__ == '__main__':\n\tmain()\nelse:\n\t_check_arch()\n", 4},
		{"double quotes, reversed", "def f():\n    pass\n\nif (\"__main__\" == __name__):\n    f()\n\n# end\n", 4},
		{"no guard", "def f():\n    pass\n\nx = f()\n", 0},
		{"guard not last", "if __name__ == '__main__':\n    f()\n\ndef g():\n    pass\n", 0},
		{"long guard", "if __name__ == '__main__':\n" + repeat("    print(1)\n", 20), 0},
	} {
		if got := (Language{}).FooterLines("m.py", []byte(c.src)); got != c.want {
			t.Errorf("%s: FooterLines = %d, want %d", c.name, got, c.want)
		}
	}
	if got := (Language{}).FooterLines("m.txt", []byte("if __name__ == '__main__':\n    f()\n")); got != 0 {
		t.Errorf("a non-Python file has a footer of %d lines", got)
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
