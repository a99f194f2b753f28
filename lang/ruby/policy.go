package ruby

import (
	"context"
	"path"
	"regexp"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// Rules for model-written Ruby, checked before it runs, besides the
// forging rules every language has (lang.ForgeRules). Ruby can reopen
// any class, so the verdict is guarded by name and by the ways around a
// name (a constant looked up from a string, send, eval):
//
//   - ruby.minitest-patch: non-test code that reopens or patches
//     minitest (module Minitest, class Minitest::…, Minitest.after_run,
//     Minitest::Test.prepend/class_eval/define_method, Minitest.reporter)
//     or reaches it by a computed name (const_get, Object.const_get).
//   - ruby.exit: a hard exit or exit hook that skips minitest's report
//     (exit!, Process.exit!, at_exit, Process.kill, abort), or a rewrite
//     of the process's own output streams ($stdout.reopen, STDOUT.reopen,
//     $stdout = …, IO.new(1)).
//   - ruby.runner-output (with lang.ForgeFindings): text imitating
//     minitest's verbose lines ("Class#test = 0.00 s = .") or its summary
//     ("N runs, N assertions, 0 failures").
//   - ruby.eval (warning): eval, instance_eval, class_eval or send with a
//     computed name, through which the names above are spelt otherwise.
var (
	minitestPatchRe = regexp.MustCompile(`(?m)^\s*(?:module|class)\s+(?:::)?Minitest\b|\bMinitest(?:::\w+)*\s*\.\s*(?:after_run|reporter|run|prepend|include|extend|class_eval|module_eval|class_exec|define_method|alias_method|remove_method|send|__send__|instance_variable_set|const_set)\b|\bconst_get\s*\(?\s*["':]\s*Mini|\bMinitest::\w+\s*=`)
	exitRe          = regexp.MustCompile(`(?m)\bexit!|\bProcess\.(?:exit!|kill|abort)\b|\bat_exit\b|^\s*abort\b|(?:\$stdout|\$stderr|\bSTDOUT|\bSTDERR)\s*\.\s*(?:reopen|close)\b|(?:\$stdout|\$stderr)\s*=[^=]|\bIO\.(?:new|for_fd)\s*\(\s*[12]\b`)
	minitestOutRe   = regexp.MustCompile(`#\w+ = \d+\.\d+ s = [.FES]|\d+ runs, \d+ assertions, \d+ failures|#\{[^}]*\} runs, `)
	evalRe          = regexp.MustCompile(`\b(?:instance_eval|class_eval|module_eval|eval)\s*\(?\s*[^\s{(]|\b(?:send|__send__|public_send)\s*\(\s*[^:\s"']`)
)

// PolicyRules is Ruby's rule catalogue.
func (Language) PolicyRules() []lang.PolicyRule {
	return append([]lang.PolicyRule{
		{Name: "ruby.minitest-patch", Description: "non-test code that reopens or patches minitest (its classes, reporter, run or after_run hooks), also by a computed constant name", Block: true, NonTestOnly: true},
		{Name: "ruby.exit", Description: "a hard exit or exit hook that skips minitest's report (exit!, at_exit, Process.kill, abort) or a rewrite of the process's own stdout/stderr", Block: true, NonTestOnly: true, PerUse: true},
		{Name: "ruby.eval", Description: "eval, instance_eval, class_eval or send with a computed name (a way to spell the other rules' names otherwise)", NonTestOnly: true, PerUse: true},
	}, lang.ForgeRules("ruby")...)
}

// CheckPolicy checks one .rb file; nothing of src runs.
func (Language) CheckPolicy(_ context.Context, rel string, src []byte, _ lang.PolicyOptions) ([]lang.PolicyFinding, error) {
	if path.Ext(rel) != ".rb" && path.Base(rel) != "Rakefile" {
		return nil, nil
	}
	var out []lang.PolicyFinding
	add := func(re *regexp.Regexp, rule, msg string) {
		for _, m := range re.FindAllIndex(src, 20) {
			out = append(out, lang.PolicyFinding{Rule: rule, Line: lang.LineOf(src, m[0]), Message: msg + " (" + lang.QuoteSetup(string(src[m[0]:m[1]])) + ")"})
		}
	}
	add(minitestPatchRe, "ruby.minitest-patch", "patches minitest, which decides whether the tests pass")
	add(exitRe, "ruby.exit", "exits or rewrites output around minitest's report")
	add(minitestOutRe, "ruby.runner-output", "text that imitates minitest's result output")
	add(evalRe, "ruby.eval", "evaluates or sends a computed name")
	return append(out, lang.ForgeFindings("ruby", src)...), nil
}
