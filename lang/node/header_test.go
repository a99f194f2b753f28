package node

import "testing"

func TestHeaderLines(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      int
	}{
		{"esm", "import {\n  a,\n  b,\n} from './x.js';\nimport c from './c.js';\n\nexport function f() {}\n", 5},
		{"commonjs", "#!/usr/bin/env node\n'use strict';\n/* license\n * text\n */\nconst fs = require('fs');\nconst {a, b} = require('./x');\n\nfunction f() {}\n", 7},
		{"export from", "export * from './a';\nexport { b as c } from './b';\nconst x = 1;\n", 2},
		{"a const that is code", "const x = compute();\n", 0},
	} {
		if got := (Language{}).HeaderLines("m.ts", []byte(c.src)); got != c.want {
			t.Errorf("%s: HeaderLines = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestImportAliases(t *testing.T) {
	src := "import { parse as parseV1, stringify } from './s.js';\nexport { default as v4 } from './v4.js';\nconst {padLeft: pad, other} = require('./pad');\n"
	got := (Language{}).ImportAliases("m.js", []byte(src))
	if len(got) != 3 || got["parseV1"] != "parse" || got["v4"] != "default" || got["pad"] != "padLeft" {
		t.Errorf("ImportAliases = %v", got)
	}
}
