package node

import (
	"context"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

var (
	jsModuleRe = regexp.MustCompile(`(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+)(["'\x60])((?:node:)?[\w./@-]+)["'\x60]`)
	jsRmRe     = regexp.MustCompile(`\b(?:fs|fsp|promises|fs\.promises)\.(rm|rmSync|rmdir|rmdirSync)\s*\(\s*(["'\x60])([^"'\x60]*)["'\x60]`)
)

// PolicyRules: processes, sockets, deleting outside the workspace, and
// tampering with the assertion libraries.
func (Language) PolicyRules() []lang.PolicyRule {
	rules := []lang.PolicyRule{
		{Name: "js.child-process", Description: "requires or imports child_process", Block: true},
		{Name: "js.net", Description: "requires or imports net, dgram or tls", Block: true},
		{Name: "js.fs-rm", Description: "fs.rm/rmSync/rmdir/rmdirSync on an absolute path or one with ..", Block: true},
		{Name: "js.assert-tamper", Description: "reassigns, deletes or redefines members of assert/node:assert/expect, or calls expect.extend, in non-test code", Block: true, NonTestOnly: true},
		{Name: "js.exit", Description: "process.exit, reallyExit, abort, kill, exitCode, or an exit/beforeExit handler in non-test code (they decide how a test run ends)", Block: true, NonTestOnly: true},
		{Name: "js.vm-escape", Description: "the vm module, process.binding, process.dlopen or constructor.constructor in non-test code (escapes jest's sandbox to the runner's own process)", Block: true, NonTestOnly: true},
	}
	return append(rules, lang.ForgeRules("js")...)
}

// CheckPolicy scans JavaScript and TypeScript files; other files give nil.
func (Language) CheckPolicy(_ context.Context, rel string, src []byte, _ lang.PolicyOptions) ([]lang.PolicyFinding, error) {
	switch path.Ext(rel) {
	case ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts", ".cts":
		return append(checkJS(rel, src), lang.ForgeFindings("js", src)...), nil
	}
	return nil, nil
}

// checkJS scans JavaScript or TypeScript. Comments are blanked first, and
// string contents are blanked except module specifiers of require/import
// and the first argument of fs.rm*, so a string that merely mentions
// "child_process" never matches.
func checkJS(rel string, src []byte) []lang.PolicyFinding {
	code := blankJS(src)
	var out []lang.PolicyFinding
	for _, m := range jsModuleRe.FindAllSubmatchIndex(code, -1) {
		mod := strings.TrimPrefix(string(code[m[4]:m[5]]), "node:")
		line := lang.LineOf(code, m[0])
		switch strings.Split(mod, "/")[0] {
		case "child_process":
			out = append(out, lang.PolicyFinding{Rule: "js.child-process", Line: line, Message: "importing " + mod})
		case "net", "dgram", "tls":
			out = append(out, lang.PolicyFinding{Rule: "js.net", Line: line, Message: "importing " + mod})
		}
	}
	for _, m := range jsRmRe.FindAllSubmatchIndex(code, -1) {
		p := string(code[m[6]:m[7]])
		if lang.OutsideWorkspace(p) {
			out = append(out, lang.PolicyFinding{Rule: "js.fs-rm", Line: lang.LineOf(code, m[0]),
				Message: "fs." + string(code[m[2]:m[3]]) + "(" + quote(p) + ") outside the workspace"})
		}
	}
	for _, m := range jsModuleRe.FindAllSubmatchIndex(code, -1) {
		if mod := strings.TrimPrefix(string(code[m[4]:m[5]]), "node:"); mod == "vm" || mod == "module" || mod == "worker_threads" || mod == "inspector" {
			out = append(out, lang.PolicyFinding{Rule: "js.vm-escape", Line: lang.LineOf(code, m[0]), Message: "importing " + mod})
		}
	}
	for _, m := range jsVMRe.FindAllIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "js.vm-escape", Line: lang.LineOf(code, m[0]), Message: "using " + despace(code[m[0]:m[1]])})
	}
	for _, m := range jsExitRe.FindAllIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "js.exit", Line: lang.LineOf(code, m[0]), Message: "using " + despace(code[m[0]:m[1]])})
	}
	for _, m := range jsExitEventRe.FindAllIndex(src, -1) {
		out = append(out, lang.PolicyFinding{Rule: "js.exit", Line: lang.LineOf(src, m[0]), Message: "an exit handler: " + despace(src[m[0]:m[1]])})
	}
	return append(out, jsTamper(code)...)
}

// What ends or outlives a test run from the code under test, and what
// reaches the runner's own process from inside jest's vm context. The
// code is blanked (comments, strings); the event name of process.on is
// matched on the source.
var (
	jsExitRe = regexp.MustCompile(`\bprocess\s*(?:\.\s*|\[\s*)(?:exit|reallyExit|abort|kill|_kill|exitCode)\b|\bprocess\s*\[|(?:=|\(|,|:)\s*(?:globalThis\s*\.\s*)?process\s*(?:[;,)}\n]|$)`)
	// matched on the source: the event name is a string
	jsExitEventRe = regexp.MustCompile(`\bprocess\s*\.\s*(?:on|once|addListener|prependListener)\s*\(\s*["'\x60](?:exit|beforeExit)["'\x60]`)
	jsVMRe        = regexp.MustCompile(`\bprocess\s*\.\s*(?:binding|_linkedBinding|dlopen|mainModule)\b|\bconstructor\s*(?:\.\s*|\[\s*["'\x60]\s*["'\x60]\s*\]\s*)constructor\b`)
)

func despace(b []byte) string { return strings.Join(strings.Fields(string(b)), "") }

// Assertion tampering in JavaScript: names bound to node:assert (and the
// usual assertion globals) whose members are reassigned, deleted or
// redefined, and expect.extend, from non-test code.
var (
	jsAssertModule = `require\s*\(\s*["'](?:node:)?assert(?:/strict)?["']\s*\)(?:\s*\.\s*strict)?`
	jsAssertBindRe = regexp.MustCompile(`(?:\b(?:const|let|var)\s+([\w$]+)\s*=\s*` + jsAssertModule +
		`|\bimport\s+(?:\*\s+as\s+)?([\w$]+)(?:\s*,\s*\{[^}]*\})?\s+from\s+["'](?:node:)?assert(?:/strict)?["'])`)
	jsGlobalTamperRe = regexp.MustCompile(`\b(?:globalThis|global|window|self)\s*\.\s*(assert|expect|it|test|describe)\s*(?:=[^=>]|\|\|=|\?\?=)`)
	jsExtendRe       = regexp.MustCompile(`(?:^|[^\w$.])expect\s*\.\s*extend\s*\(`)
)

func jsTamper(code []byte) []lang.PolicyFinding {
	names := []string{"assert", "expect", "chai", jsAssertModule}
	for _, m := range jsAssertBindRe.FindAllSubmatch(code, -1) {
		for _, g := range m[1:] {
			if len(g) > 0 {
				names = append(names, regexp.QuoteMeta(string(g)))
			}
		}
	}
	n := `(` + strings.Join(names, "|") + `)`
	res := []*regexp.Regexp{
		// assert.strictEqual = …, assert['equal'] = …, require('assert').ok = …
		regexp.MustCompile(`(?:^|[^\w$.])` + n + `((?:\s*\.\s*[\w$]+|\s*\[[^\]\n]*\])+)\s*(?:=[^=>]|\|\|=|\?\?=|&&=)`),
		// Object.defineProperty(assert, …), Reflect.set(assert, …), Object.assign(assert, …)
		regexp.MustCompile(`\b(?:Object\s*\.\s*(?:defineProperty|defineProperties|assign|setPrototypeOf)|Reflect\s*\.\s*(?:set|defineProperty|deleteProperty|setPrototypeOf))\s*\(\s*` + n + `\b`),
		// delete assert.ok
		regexp.MustCompile(`\bdelete\s+` + n + `\s*[.\[]`),
	}
	var out []lang.PolicyFinding
	for _, re := range res {
		for _, m := range re.FindAllSubmatchIndex(code, -1) {
			what := strings.Join(strings.Fields(string(code[m[2]:m[3]])), "")
			if len(m) > 5 && m[4] >= 0 {
				what += strings.Join(strings.Fields(string(code[m[4]:m[5]])), "")
			}
			out = append(out, lang.PolicyFinding{Rule: "js.assert-tamper", Line: lang.LineOf(code, m[2]), Message: "rebinding " + what + " from non-test code"})
		}
	}
	for _, m := range jsGlobalTamperRe.FindAllSubmatchIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "js.assert-tamper", Line: lang.LineOf(code, m[0]), Message: "replacing the global " + string(code[m[2]:m[3]]) + " from non-test code"})
	}
	for _, m := range jsExtendRe.FindAllIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "js.assert-tamper", Line: lang.LineOf(code, m[1]), Message: "calling expect.extend (it can redefine matchers) from non-test code"})
	}
	// The same rewrite of a module that no name above can see: a module
	// loaded by a computed name (require(['node', 'as' + 'sert'].join(':')))
	// in a file that rewrites objects through Reflect or Object; and the
	// module loader itself (require.cache, Module._load, Module.prototype
	// .require), through which any module can be replaced.
	if jsComputedLoadRe.Match(code) {
		for _, m := range jsMutateRe.FindAllIndex(code, -1) {
			out = append(out, lang.PolicyFinding{Rule: "js.assert-tamper", Line: lang.LineOf(code, m[0]),
				Message: "rewriting objects with Reflect/Object in a file that loads a module by a computed name, from non-test code"})
		}
	}
	for _, m := range jsLoaderTamperRe.FindAllIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "js.assert-tamper", Line: lang.LineOf(code, m[0]),
			Message: "changing the module loader (require.cache, Module._load, Module.prototype.require) from non-test code"})
	}
	return out
}

var (
	// require(x) or import(x) whose argument is not a string literal
	// (strings other than module specifiers are blanked, so a literal
	// starts with a quote).
	jsComputedLoadRe = regexp.MustCompile(`(?:^|[^\w$.])(?:require|import)\s*\(\s*[^'"\x60\s)]`)
	jsMutateRe       = regexp.MustCompile(`\b(?:Object\s*\.\s*(?:defineProperty|defineProperties|assign|setPrototypeOf)|Reflect\s*\.\s*(?:set|defineProperty|deleteProperty|setPrototypeOf))\s*\(`)
	jsLoaderTamperRe = regexp.MustCompile(`\brequire\s*\.\s*cache\s*(?:\[[^\]\n]*\]\s*)?(?:=[^=>]|\.)|\bdelete\s+require\s*\.\s*cache|\bModule\s*\.\s*(?:_load|_resolveFilename|prototype\s*\.\s*require)\s*=[^=>]`)
)

func quote(s string) string { return `"` + s + `"` }

// blankJS blanks comments, and the contents of strings that are not module
// specifiers or fs.rm arguments (decided by what precedes the quote).
func blankJS(src []byte) []byte {
	b := append([]byte(nil), src...)
	for i := 0; i < len(b); {
		switch {
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			for i < len(b) && !(b[i] == '*' && i+1 < len(b) && b[i+1] == '/') {
				if b[i] != '\n' {
					b[i] = ' '
				}
				i++
			}
			if i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i += 2
			}
		case b[i] == '"' || b[i] == '\'' || b[i] == '`':
			keep := specifierContext(b[:i])
			q := b[i]
			j := i + 1
			for j < len(b) && b[j] != q && !(q != '`' && b[j] == '\n') {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if !keep {
				for k := i + 1; k < j && k < len(b); k++ {
					if b[k] != '\n' {
						b[k] = ' '
					}
				}
			}
			i = j + 1
		default:
			i++
		}
	}
	return b
}

var specCtxRe = regexp.MustCompile(`(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+|\.(?:rm|rmSync|rmdir|rmdirSync)\s*\(\s*)$`)

func specifierContext(before []byte) bool {
	start := len(before) - 40
	if start < 0 {
		start = 0
	}
	return specCtxRe.Match(before[start:])
}
