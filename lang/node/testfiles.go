package node

import (
	"encoding/json"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

var (
	// jsTestConfigRe: jest.config.js, vitest.config.mts, vitest.workspace.ts,
	// .mocharc.yml, ava.config.cjs, karma.conf.js, jest.setup.js, setupTests.ts.
	jsTestConfigRe = regexp.MustCompile(`^(jest\.(config|setup)|vitest\.(config|workspace|setup)|\.mocharc|ava\.config|karma\.conf|setuptests)(\.[a-z0-9]+)*$`)
	// A vite config configures vitest when it has a test section.
	viteConfigRe = regexp.MustCompile(`^vite\.config(\.[a-z0-9]+)*$`)
	viteTestRe   = regexp.MustCompile(`\btest\s*:`)
)

// IsTestFile: *.test.* and *.spec.* JavaScript and TypeScript files.
func (Language) IsTestFile(p string) bool {
	base := path.Base(p)
	for _, ext := range []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".tsx", ".jsx"} {
		if strings.HasSuffix(base, ".test"+ext) || strings.HasSuffix(base, ".spec"+ext) {
			return true
		}
	}
	return false
}

// TestInfra: how npm runs the tests (package.json's test scripts and
// runner settings) and the runners' configuration files.
func (Language) TestInfra(p string, before, after []byte) string {
	lower := strings.ToLower(path.Base(p))
	switch {
	case lower == "package.json":
		if packageTestKeys(before) != packageTestKeys(after) {
			return "changes how npm runs the tests (scripts.test, pretest, posttest, or the jest, mocha, ava or vitest settings)"
		}
	case jsTestConfigRe.MatchString(lower):
		return "configures the JavaScript test runner"
	case viteConfigRe.MatchString(lower):
		if viteTestRe.Match(before) || viteTestRe.Match(after) {
			return "configures vitest (its test section)"
		}
	}
	return ""
}

// TestPatterns: test()/it() calls, assert and expect(), .skip/.todo,
// xit/xdescribe and {skip: true}.
func (Language) TestPatterns() lang.TestPatterns {
	return lang.TestPatterns{
		Funcs:   `\b(?:test|it)(?:\.\w+)?\s*\(\s*['"` + "`" + `]`,
		Asserts: `\bassert\w*\b|\bexpect\s*\(`,
		Skips:   `\b(?:it|test|describe)\.(?:skip|todo)\b|\bx(?:it|describe)\s*\(|\{\s*skip\s*:\s*true`,
	}
}

// packageTestKeys renders the parts of a package.json that decide how
// `npm test` runs: scripts.test, pretest and posttest, and the top-level
// jest, mocha, ava and vitest settings. A file that does not parse
// renders as itself, so any change to it counts.
func packageTestKeys(src []byte) string {
	if src == nil {
		return ""
	}
	var pkg map[string]json.RawMessage
	if err := json.Unmarshal(src, &pkg); err != nil {
		return "unparsed:" + string(src)
	}
	var scripts map[string]json.RawMessage
	_ = json.Unmarshal(pkg["scripts"], &scripts)
	keep := map[string]any{}
	for _, k := range []string{"test", "pretest", "posttest"} {
		if v, ok := scripts[k]; ok {
			keep["scripts."+k] = canonicalJSON(v)
		}
	}
	for _, k := range []string{"jest", "mocha", "ava", "vitest"} {
		if v, ok := pkg[k]; ok {
			keep[k] = canonicalJSON(v)
		}
	}
	out, _ := json.Marshal(keep) // map keys are sorted
	return string(out)
}

func canonicalJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
