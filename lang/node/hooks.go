package node

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// npm's pre and post scripts around a test run. `npm test` runs pretest,
// test and posttest, stopping at the first that fails; `npm run X` (and
// `npm run-script X`, `npm test` again) inside any of them runs preX, X
// and postX the same way; `--ignore-scripts` (or ignore-scripts in
// .npmrc) runs the named script only. Run as one `npm test`, a failing
// hook is only an exit status and its output is mixed with the tests'.
// So when the test script reaches a hook, npm runs every script through
// a step shell (testrun.StepShell, set as npm's script-shell, which npm
// passes to the npm commands the scripts run): it marks each hook's start
// and exit status, and sends the hook's output to stderr, so that the
// runner step's results are read as without hooks and a failing hook is a
// result of its own, "npm:pretest", with its command, exit status and the
// tail of its output. Everything else runs as npm runs it, hooks included.

// npmRunRe finds the scripts a script runs through npm: `npm run X`,
// `npm run-script X`, `npm run --silent X`, `npm test`, `npm t`.
var npmRunRe = regexp.MustCompile(`(?:^|[\s;&|(])npm\s+(?:(?:run|run-script|rum|urn)((?:\s+-[\w-]+(?:=\S+)?)*)\s+([\w:.@/][\w:.@/-]*)|(test|t|tst)\b)`)

// npmHooks returns the hook scripts a run of the "test" script reaches,
// in the order found ("pretest", "posttest", "prelint"), with their
// commands. None when the package has none, or npm would not run them.
func npmHooks(scripts map[string]string, npmrc string) []string {
	if ignoreScripts(npmrc) || npmrcSets(npmrc, "script-shell") {
		// No hooks run; or the project's own shell runs them, which a
		// step shell would replace.
		return nil
	}
	type step struct {
		name  string
		hooks bool // npm runs its pre and post scripts
	}
	var hooks []string
	seen := map[step]bool{}
	hooked := map[string]bool{}
	queue := []step{{"test", true}}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if seen[st] {
			continue
		}
		seen[st] = true
		run := []string{st.name}
		for _, h := range []string{"pre" + st.name, "post" + st.name} {
			if _, ok := scripts[h]; ok && st.hooks {
				run = append(run, h)
				if !hooked[h] {
					hooked[h] = true
					hooks = append(hooks, h)
				}
			}
		}
		for _, s := range run {
			for _, m := range npmRunRe.FindAllStringSubmatch(scripts[s], -1) {
				target := m[2]
				if m[3] != "" {
					target = "test"
				}
				if _, ok := scripts[target]; ok {
					queue = append(queue, step{target, !strings.Contains(m[1], "--ignore-scripts")})
				}
			}
		}
	}
	return hooks
}

// npmrcSets reports whether .npmrc sets key.
func npmrcSets(npmrc, key string) bool {
	_, ok := npmrcValue(npmrc, key)
	return ok
}

// ignoreScripts reports whether .npmrc turns lifecycle scripts off.
func ignoreScripts(npmrc string) bool {
	v, ok := npmrcValue(npmrc, "ignore-scripts")
	return ok && (v == "true" || v == "")
}

// npmrcValue is key's value in an .npmrc (ini: key = value, ; and #
// comments).
func npmrcValue(npmrc, key string) (string, bool) {
	for _, l := range strings.Split(npmrc, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == ';' || l[0] == '#' {
			continue
		}
		k, v, _ := strings.Cut(l, "=")
		if strings.TrimSpace(k) == key {
			return strings.Trim(strings.TrimSpace(v), `"'`), true
		}
	}
	return "", false
}

// stepShell is the step shell for hooks (npmHooks): every script runs as
// npm's default shell runs it (`sh -c script`; npm 9 to 11 pass the
// script after -c), and a hook between two testrun.StepPrefix marks on
// stderr, its output on stderr too.
func stepShell(scripts map[string]string, hooks []string) *testrun.StepShell {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# fixpoint: runs npm's scripts as sh does, marking the pre and post scripts\ncase \"$npm_lifecycle_event\" in\n")
	for _, h := range hooks {
		if strings.ContainsAny(h, "'\n") {
			continue
		}
		start, _ := json.Marshal(map[string]string{"step": "npm:" + h, "command": scripts[h]})
		name, _ := json.Marshal("npm:" + h)
		b.WriteString("'" + h + "')\n")
		b.WriteString("  printf '\\n%s\\n' " + shQuote(testrun.StepPrefix+string(start)) + " >&2\n")
		b.WriteString("  if [ \"$1\" = -c ]; then sh -c \"$2\" >&2; else sh \"$@\" >&2; fi\n")
		b.WriteString("  c=$?\n")
		b.WriteString("  printf '\\n%s%s}\\n' " + shQuote(testrun.StepPrefix+`{"step":`+string(name)+`,"exit":`) + " \"$c\" >&2\n")
		b.WriteString("  exit $c;;\n")
	}
	b.WriteString("esac\nif [ \"$1\" = -c ]; then exec sh -c \"$2\"; fi\nexec sh \"$@\"\n")
	return &testrun.StepShell{Script: b.String(), Env: "npm_config_script_shell"}
}

// shQuote single-quotes s for sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hooksFor is used by nodeRunner: the step shell of a package whose test
// run reaches hooks, nil otherwise.
func hooksFor(scripts map[string]string, npmrc string) *testrun.StepShell {
	hooks := npmHooks(scripts, npmrc)
	if len(hooks) == 0 {
		return nil
	}
	slices.Sort(hooks)
	return stepShell(scripts, hooks)
}
