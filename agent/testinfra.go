package agent

import (
	"bytes"
	"encoding/json"
	"path"
	"regexp"
	"strings"
)

// testInfra explains why a new, changed or deleted file is test
// infrastructure, or returns "" when it is not: a file that decides which
// tests run, how they run or how they report. In fix mode the model may
// no more change these than the tests themselves: a new conftest.py that
// marks every test xfail, or a hook that reports "passed", fakes a fix.
// before or after is nil when the file did not exist or is deleted.
func testInfra(p string, before, after []byte) string {
	base := path.Base(p)
	lower := strings.ToLower(base)
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if dir == "testdata" {
			return "is test data (under testdata/)"
		}
	}
	switch {
	case lower == "conftest.py":
		return "is a pytest plugin (conftest.py)"
	case lower == "pytest.ini" || lower == ".pytest.ini":
		return "configures pytest"
	case lower == "sitecustomize.py" || lower == "usercustomize.py" || strings.HasSuffix(lower, ".pth"):
		return "runs when Python starts"
	case lower == "tox.ini":
		if iniSection(before, isPytestSection) != iniSection(after, isPytestSection) {
			return "changes its [pytest] section"
		}
	case lower == "setup.cfg":
		if iniSection(before, isPytestSection) != iniSection(after, isPytestSection) {
			return "changes its [tool:pytest] section"
		}
	case lower == "pyproject.toml":
		if iniSection(before, isPyprojectTestSection) != iniSection(after, isPyprojectTestSection) {
			return "changes its [tool.pytest] section"
		}
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
	case strings.HasSuffix(lower, "_test.go"):
		if testMainRe.Match(after) && !bytes.Equal(testMainBody(before), testMainBody(after)) {
			return "adds or changes TestMain, which decides whether the package's tests run"
		}
	}
	return ""
}

var (
	// jsTestConfigRe: jest.config.js, vitest.config.mts, vitest.workspace.ts,
	// .mocharc.yml, ava.config.cjs, karma.conf.js, jest.setup.js, setupTests.ts.
	jsTestConfigRe = regexp.MustCompile(`^(jest\.(config|setup)|vitest\.(config|workspace|setup)|\.mocharc|ava\.config|karma\.conf|setuptests)(\.[a-z0-9]+)*$`)
	// A vite config configures vitest when it has a test section.
	viteConfigRe = regexp.MustCompile(`^vite\.config(\.[a-z0-9]+)*$`)
	viteTestRe   = regexp.MustCompile(`\btest\s*:`)
	testMainRe   = regexp.MustCompile(`(?m)^func\s+TestMain\s*\(`)
	topCloseRe   = regexp.MustCompile(`(?m)^\}`)
)

// testMainBody is the text from "func TestMain(" to the next top-level
// declaration, or nil.
func testMainBody(src []byte) []byte {
	loc := testMainRe.FindIndex(src)
	if loc == nil {
		return nil
	}
	rest := src[loc[0]:]
	if end := topCloseRe.FindIndex(rest); end != nil {
		rest = rest[:end[1]]
	}
	return rest
}

func isPytestSection(name string) bool {
	return name == "pytest" || name == "tool:pytest"
}

func isPyprojectTestSection(name string) bool {
	return name == "tool.pytest" || strings.HasPrefix(name, "tool.pytest.")
}

// iniSection returns the lines of the sections whose name (the text in
// [brackets], trimmed) satisfies keep, in order, whitespace-trimmed.
func iniSection(src []byte, keep func(string) bool) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") && strings.Contains(t, "]") {
			name := strings.Trim(t[:strings.LastIndex(t, "]")+1], "[] \t")
			name = strings.Trim(strings.Trim(name, `"'`), " ")
			in = keep(name)
		}
		if in && t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ";") {
			b.WriteString(t + "\n")
		}
	}
	return b.String()
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
