package python

import "testing"

func TestHeaderLines(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      int
	}{
		{"imports", "import os\nimport sys\n\ndef f():\n    pass\n", 2},
		{"docstring and parenthesised import", "#!/usr/bin/env python\n\"\"\"Doc.\n\nMore.\n\"\"\"\nfrom x import (\n    a,\n    b,\n)\n\nX = 1\n", 9},
		{"optional import", "import os\n\ntry:\n    import ujson as json\nexcept ImportError:\n    json = None\n\nclass A:\n    pass\n", 6},
		{"a try that is code", "import os\n\ntry:\n    run()\nexcept ImportError:\n    pass\n", 1},
		{"no header", "def f():\n    pass\n", 0},
	} {
		if got := (Language{}).HeaderLines("m.py", []byte(c.src)); got != c.want {
			t.Errorf("%s: HeaderLines = %d, want %d", c.name, got, c.want)
		}
	}
	if got := (Language{}).HeaderLines("m.js", []byte("import os\n")); got != 0 {
		t.Errorf("a .js file: %d, want 0", got)
	}
}

func TestImportAliases(t *testing.T) {
	src := "from ._num import parse_digits as _digits, scale\nfrom .alg import (\n    a as b,\n    c,\n)\nimport os.path as osp\n"
	got := (Language{}).ImportAliases("m.py", []byte(src))
	if len(got) != 2 || got["_digits"] != "parse_digits" || got["b"] != "a" {
		t.Errorf("ImportAliases = %v, want _digits -> parse_digits, b -> a", got)
	}
}
