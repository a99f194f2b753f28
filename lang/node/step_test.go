package node

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/langtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
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

// TraceTests on a configured command that owns its reporter, and on a
// composed script: the runner step runs alone, narrowed, traced.
func TestTraceStepRunner(t *testing.T) {
	pkg := `{"scripts":{"test":"npm run-script lint && npm run-script unit-test","lint":"jshint x.js","unit-test":"mocha --compilers js:babel-register"},"devDependencies":{"mocha":"3.0.0","babel-register":"6.0.0"}}`
	snap := langtest.SnapOf(map[string]string{"package.json": pkg})
	fail := []testrun.Result{{ID: "suite fails", Name: "suite fails", Status: testrun.StatusFail}}
	for _, tt := range []struct {
		name string
		r    testrun.Runner
		want []string // the words the traced command ends with
	}{
		{name: "configured with its reporter", r: testrun.Custom("npx mocha --reporter tap --compilers js:babel-register", nil),
			want: []string{"mocha", "--reporter", "tap", "--compilers", "js:babel-register", "--grep", "^(?:suite fails$)"}},
		{name: "composed script", r: Language{}.TestCommand(snap),
			want: []string{"mocha", "--compilers", "js:babel-register", "--grep", "^(?:suite fails$)"}},
		{name: "configured npm run", r: testrun.Custom("npm run unit-test", nil),
			want: []string{"mocha", "--compilers", "js:babel-register", "--grep", "^(?:suite fails$)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Language{}.TraceTests(snap, tt.r, fail)
			if !ok || got.TracePath != lang.TracePath || len(got.Args) < len(tt.want) || !slices.Equal(got.Args[len(got.Args)-len(tt.want):], tt.want) {
				t.Fatalf("TraceTests(%q) = %q, %v; want a traced command ending in %q", tt.r.Args, got.Args, ok, tt.want)
			}
			if !slices.Contains(got.Args, stepExec) || !slices.Contains(got.Args, c8OrV8) {
				t.Errorf("TraceTests(%q) = %q, want the step run through stepExec under c8 or V8 coverage (a transform)", tt.r.Args, got.Args)
			}
		})
	}
}
