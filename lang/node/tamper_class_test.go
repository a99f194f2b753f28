package node

import (
	"strings"
	"testing"
)

// The assertion library neutered where no name shows it: a module loaded
// by a computed name and rewritten through Reflect, or the module loader
// changed. Near misses: a plugin loader with a computed require and no
// rewriting, Object.assign in a file whose requires are literal.
func TestTamperByComputedModule(t *testing.T) {
	tests := []struct {
		name, src string
		want      bool
	}{
		{"reflect over a computed require", "const lib = require(['node', 'as' + 'sert'].join(':'));\nReflect.ownKeys(lib).forEach((k) => { Reflect.set(lib, k, () => undefined); });\n", true},
		{"dynamic import and defineProperty", "const m = await import(name);\nObject.defineProperty(m.default, 'ok', { value: () => {} });\n", true},
		{"require.cache", "require.cache[require.resolve('assert')] = { exports: {} };\n", true},
		{"Module._load", "const Module = require('module');\nModule._load = function () { return {}; };\n", true},
		{"plugin loader", "const plugin = require(path.join(dir, name));\nplugin.init();\n", false},
		{"assign with literal requires", "const x = require('./x');\nconst y = Object.assign({}, x, { a: 1 });\n", false},
	}
	for _, tt := range tests {
		var got bool
		for _, f := range checkJS("lib/x.js", []byte(tt.src)) {
			if f.Rule == "js.assert-tamper" && (strings.Contains(f.Message, "computed name") || strings.Contains(f.Message, "module loader")) {
				got = true
			}
		}
		if got != tt.want {
			t.Errorf("%s: tamper finding = %v, want %v", tt.name, got, tt.want)
		}
	}
}
