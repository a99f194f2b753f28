package node

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestTestStep(t *testing.T) {
	for _, tt := range []struct {
		name    string
		scripts map[string]string
		prog    string // "" when no step
		words   []string
		env     []string
	}{
		{name: "lint then npm run", scripts: map[string]string{"test": "npm run lint && npm run test-cov", "lint": "standard", "test-cov": "istanbul cover node_modules/mocha/bin/_mocha -- --require ts-node/register -R spec test.ts"},
			prog: "mocha", words: []string{"node_modules/mocha/bin/_mocha", "--require", "ts-node/register", "-R", "spec", "test.ts"}},
		{name: "linter then tape", scripts: map[string]string{"test": "standard && tape test.js"}, prog: "tape", words: []string{"tape", "test.js"}},
		{name: "nyc around mocha", scripts: map[string]string{"test": "nyc --reporter=lcov mocha --async-only"}, prog: "mocha", words: []string{"mocha", "--async-only"}},
		{name: "run-script", scripts: map[string]string{"test": "npm run-script lint && npm run-script unit-test", "lint": "jshint x.js", "unit-test": "mocha --compilers js:babel-register"},
			prog: "mocha", words: []string{"mocha", "--compilers", "js:babel-register"}},
		{name: "jest before lint", scripts: map[string]string{"test": "npm run test:jest && npm run lint", "test:jest": "jest", "lint": "eslint ."}, prog: "jest", words: []string{"jest"}},
		{name: "glob kept for the runner", scripts: map[string]string{"test": "xo && ava test/*.js"}, prog: "ava", words: []string{"ava", "test/*.js"}},
		{name: "env before the runner", scripts: map[string]string{"test": "NODE_ENV=test cross-env TZ=UTC mocha"}, prog: "mocha", words: []string{"mocha"}, env: []string{"NODE_ENV=test", "TZ=UTC"}},
		{name: "node test file", scripts: map[string]string{"test": "node build.js && node test/index.js"}, prog: "node", words: []string{"node", "test/index.js"}},
		{name: "node --test", scripts: map[string]string{"test": "tsc && node --test dist/*.test.js"}, prog: "node", words: []string{"node", "--test", "dist/*.test.js"}},
		{name: "a path to another program", scripts: map[string]string{"test": "./bin/mocha"}},
		{name: "pipe", scripts: map[string]string{"test": "mocha | tee out.txt"}},
		{name: "substitution", scripts: map[string]string{"test": "mocha $(cat files)"}},
		{name: "test loops back", scripts: map[string]string{"test": "npm test"}},
		{name: "scripts loop", scripts: map[string]string{"test": "npm run a", "a": "npm run b", "b": "npm run a"}},
		{name: "unknown wrapper", scripts: map[string]string{"test": "ts-scripts test && npm run size"}},
		{name: "lint only", scripts: map[string]string{"test": "eslint . && tsc --noEmit"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pkg, _ := json.Marshal(map[string]any{"scripts": tt.scripts})
			st, ok := testStep(pkg)
			if ok != (tt.prog != "") || st.prog != tt.prog || !slices.Equal(st.words, tt.words) || !slices.Equal(st.env, tt.env) {
				t.Errorf("testStep(%v) = %+v, %v; want %q %q %q", tt.scripts, st, ok, tt.prog, tt.words, tt.env)
			}
		})
	}
}
