package node

import (
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// A test requiring the package root (require('..'), require('../')) or a
// directory reaches the package's main file.
func TestLocalImportsOfThePackageRoot(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		from  string
		want  string
	}{
		{"main", map[string]string{"package.json": `{"main": "lib/ms.js"}`, "lib/ms.js": "", "test/t.js": "const ms = require('..')\n"}, "test/t.js", "lib/ms.js"},
		{"trailing slash, index", map[string]string{"package.json": `{}`, "index.js": "", "test/t.js": "const x = require('../')\n"}, "test/t.js", "index.js"},
		{"exports", map[string]string{"package.json": `{"exports": {".": {"import": "./src/main.mjs"}}}`, "src/main.mjs": "", "test.js": "import x from '.'\n"}, "test.js", "src/main.mjs"},
		{"directory index", map[string]string{"lib/index.ts": "", "lib/a.test.ts": "import {a} from './'\n"}, "lib/a.test.ts", "lib/index.ts"},
		{"file", map[string]string{"src/x.ts": "", "test/x.test.ts": "import {x} from '../src/x'\n"}, "test/x.test.ts", "src/x.ts"},
	}
	for _, tt := range tests {
		s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
		for k, v := range tt.files {
			s.Files[k] = sandbox.File{Data: []byte(v)}
		}
		files, _ := Language{}.LocalImports(s, tt.from)
		if !slices.Contains(files, tt.want) {
			t.Errorf("%s: LocalImports(%s) = %q, want %s", tt.name, tt.from, files, tt.want)
		}
	}
}
