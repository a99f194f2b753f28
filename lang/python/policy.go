package python

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// pythonChecker is run by the host's python3 with the checked source on
// stdin. It only calls ast.parse: the checked code is never executed.
const pythonChecker = `
import ast, json, sys
src = sys.stdin.buffer.read()
out = []
def add(rule, node, msg):
    out.append({"rule": rule, "line": getattr(node, "lineno", 0), "message": msg})
try:
    tree = ast.parse(src)
except (SyntaxError, ValueError):
    print("[]"); sys.exit(0)
mods = {"subprocess": "python.subprocess", "socket": "python.socket", "ctypes": "python.ctypes"}
aliases = {}
for node in ast.walk(tree):
    if isinstance(node, ast.Import):
        for a in node.names:
            top = a.name.split(".")[0]
            aliases[a.asname or top] = a.name if a.asname else top
            if top in mods: add(mods[top], node, "importing " + a.name)
    elif isinstance(node, ast.ImportFrom) and node.module:
        top = node.module.split(".")[0]
        if top in mods: add(mods[top], node, "importing from " + node.module)
        for a in node.names:
            aliases[a.asname or a.name] = node.module + "." + a.name
def resolve(f):
    if isinstance(f, ast.Name):
        return aliases.get(f.id, f.id)
    if isinstance(f, ast.Attribute):
        base = resolve(f.value)
        return base + "." + f.attr if base else None
    if isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "getattr" and len(f.args) >= 2:
        base = resolve(f.args[0])
        a = f.args[1]
        if base and isinstance(a, ast.Constant) and isinstance(a.value, str):
            return base + "." + a.value
    # A module reached another way is the module: sys.modules["m"],
    # sys.modules.get("m"), __import__("m"), importlib.import_module("m").
    if isinstance(f, ast.Subscript):
        base, key = resolve(f.value), f.slice
        if base == "sys.modules" and isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
    if isinstance(f, ast.Call) and f.args and isinstance(f.args[0], ast.Constant) and isinstance(f.args[0].value, str):
        fn = resolve(f.func)
        if fn in ("sys.modules.get", "__import__", "importlib.import_module", "builtins.__import__"):
            return f.args[0].value
    return None
def literal(a):
    try:
        ast.literal_eval(a); return True
    except Exception:
        return False
def outside(p):
    return p.startswith("/") or p.startswith("~") or p == ".." or p.startswith("../") or "/../" in p or p.endswith("/..")
for node in ast.walk(tree):
    if not isinstance(node, ast.Call): continue
    name = resolve(node.func)
    if not name: continue
    if name in ("os.system", "os.popen") or name.startswith("os.exec") or name.startswith("os.spawn") or name.startswith("os.posix_spawn"):
        add("python.os-system", node, "calling " + name)
    elif name == "shutil.rmtree":
        arg = node.args[0] if node.args else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and outside(arg.value):
            out.append({"rule": "python.shutil-rmtree", "line": node.lineno, "message": "shutil.rmtree(%r) outside the workspace" % arg.value, "force": "block"})
        else:
            add("python.shutil-rmtree", node, "calling shutil.rmtree")
    elif name in ("eval", "exec", "builtins.eval", "builtins.exec"):
        if node.args and not literal(node.args[0]):
            add("python.eval-exec", node, "calling %s on a non-literal" % name.split(".")[-1])
# Assertion tampering: rebinding what the test framework asserts with.
TAMPER = ("unittest", "pytest", "_pytest", "pluggy", "doctest")
def tampered(name):
    if not name: return False
    if name.split(".")[0] in TAMPER: return True
    return name in ("builtins.AssertionError", "__builtins__.AssertionError")
def strname(a):
    return a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None
# Names bound to the modules: t = __import__("unittest"), tc = unittest.TestCase.
for node in ast.walk(tree):
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        v = node.value
        if isinstance(v, ast.Call) and resolve(v.func) in ("__import__", "importlib.import_module") and v.args and strname(v.args[0]):
            aliases[node.targets[0].id] = strname(v.args[0])
        elif isinstance(v, (ast.Name, ast.Attribute)) and tampered(resolve(v)):
            aliases[node.targets[0].id] = resolve(v)
def target_name(t):
    if isinstance(t, ast.Attribute):
        return resolve(t)
    if isinstance(t, ast.Subscript):
        base, key = resolve(t.value), strname(t.slice)
        if key and base == "sys.modules" and tampered(key): return "sys.modules[%r]" % key
        if key == "AssertionError" and base in ("__builtins__", "builtins.__dict__", "vars"): return "builtins.AssertionError"
        if base and tampered(base): return base + "[...]"
    return None
def tamper(node, what):
    add("python.assert-tamper", node, "rebinding %s from non-test code" % what)
for node in ast.walk(tree):
    targets = []
    if isinstance(node, ast.Assign): targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None: targets = [node.target]
    elif isinstance(node, ast.Delete): targets = node.targets
    for t in targets:
        for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
            n = target_name(e)
            if n and (tampered(n) or n.startswith("sys.modules[")): tamper(node, n)
    if isinstance(node, ast.Call):
        name = resolve(node.func) or ""
        last = name.split(".")[-1]
        a0 = node.args[0] if node.args else None
        if a0 is None: continue
        if last in ("setattr", "delattr", "__setattr__", "__delattr__") or name.endswith("patch.object"):
            n = strname(a0) or resolve(a0)
            if tampered(n): tamper(node, n + (("." + strname(node.args[1])) if len(node.args) > 1 and strname(node.args[1]) else ""))
        elif last in ("patch", "setitem") and tampered(strname(a0)):
            tamper(node, strname(a0))
# Equality that is always true (or false): every assertEqual passes.
CONST_DUNDER = ("__eq__", "__ne__", "__hash__")
def always_equal(name, v):
    # __eq__ always true or __ne__ always false makes every equality
    # assertion pass; a constant __hash__ hides the same trick in sets.
    return (name == "__eq__" and bool(v)) or (name == "__ne__" and not v) or name == "__hash__"
def const_return(body):
    body = [b for b in body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str))]
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, (bool, int)):
        return body[0].value.value
    return None
for node in ast.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in CONST_DUNDER:
        if any((resolve(d) or "").endswith("abstractmethod") for d in node.decorator_list): continue
        v = const_return(node.body)
        if v is not None and always_equal(node.name, v): add("python.constant-eq", node, "%s always returns %r" % (node.name, v))
    elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and isinstance(node.value.body, ast.Constant):
        for t in node.targets:
            if isinstance(t, ast.Name) and t.id in CONST_DUNDER and always_equal(t.id, node.value.body.value):
                add("python.constant-eq", node, "%s always returns %r" % (t.id, node.value.body.value))
# Forcing the run's outcome: an exit handler, an exit that skips pytest's
# own reporting, or an exit while the module is imported.
called = set(id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call))
for node in ast.walk(tree):
    if isinstance(node, ast.Call):
        name = resolve(node.func) or ""
        if name.split(".")[0] == "atexit":
            add("python.exit-hook", node, "calling %s (runs at exit, after the tests)" % name)
        elif name in ("os._exit", "os.abort", "os.kill", "os.killpg", "posix._exit", "signal.signal", "signal.alarm", "signal.setitimer", "sys.settrace", "sys.setprofile", "threading.settrace"):
            add("python.exit-hook", node, "calling " + name)
    elif isinstance(node, ast.Attribute) and id(node) not in called and resolve(node) in ("os._exit", "posix._exit", "atexit.register"):
        add("python.exit-hook", node, "using " + resolve(node))
def main_guard(n):
    t = n.test
    return isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"
def at_import(body):
    for n in body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)): continue
        if isinstance(n, ast.If) and main_guard(n):
            at_import(n.orelse); continue
        if isinstance(n, ast.Raise) and n.exc is not None:
            e = n.exc.func if isinstance(n.exc, ast.Call) else n.exc
            if resolve(e) in ("SystemExit", "builtins.SystemExit", "KeyboardInterrupt"):
                add("python.exit-hook", n, "raising %s while the module is imported" % resolve(e))
        for sub in ast.iter_child_nodes(n):
            if isinstance(sub, ast.Call) and resolve(sub.func) in ("sys.exit", "exit", "quit", "builtins.exit"):
                add("python.exit-hook", sub, "calling %s while the module is imported" % resolve(sub.func))
        for field in ("body", "orelse", "finalbody", "handlers"):
            v = getattr(n, field, None)
            if isinstance(v, list): at_import(v)
        if isinstance(n, ast.ExceptHandler): at_import(n.body)
at_import(tree.body)
print(json.dumps(out))
`

type pyFinding struct {
	Rule    string `json:"rule"`
	Line    int    `json:"line"`
	Message string `json:"message"`
	Force   string `json:"force"`
}

// PolicyRules: processes, sockets, native code, eval/exec, deleting
// outside the workspace, and tampering with the test frameworks.
func (Language) PolicyRules() []lang.PolicyRule {
	rules := []lang.PolicyRule{
		{Name: "python.subprocess", Description: "imports subprocess", Block: true},
		{Name: "python.os-system", Description: "os.system, os.popen, os.exec*, os.spawn*", Block: true},
		{Name: "python.socket", Description: "imports socket", Block: true},
		{Name: "python.shutil-rmtree", Description: "shutil.rmtree (block on an absolute path or one with ..)"},
		{Name: "python.ctypes", Description: "imports ctypes", Block: true},
		{Name: "python.eval-exec", Description: "eval or exec on something other than a literal", Block: true},
		{Name: "python.assert-tamper", Description: "rebinds unittest, pytest or builtins.AssertionError members (assignment, setattr, patch) in non-test code", Block: true, NonTestOnly: true},
		{Name: "python.constant-eq", Description: "__eq__ that always returns true, __ne__ always false, or __hash__ a constant, in non-test code", Block: true, NonTestOnly: true},
		{Name: "python.exit-hook", Description: "atexit, os._exit, os.kill, signal handlers, tracing hooks, and sys.exit or raise SystemExit while a module is imported, in non-test code (they decide how a test run ends)", Block: true, NonTestOnly: true},
		{Name: "python.plugin-entry", Description: "a file the interpreter or pytest loads by itself: *.dist-info or *.egg-info contents, entry_points.txt, *.pth, sitecustomize.py, usercustomize.py, or a pytest11 entry point (pytest plugins load into every run)", Block: true},
	}
	return append(rules, lang.ForgeRules("python")...)
}

// CheckPolicy parses .py and .pyi files with Python's own ast module run
// by opts.Python (else python3 on PATH; nothing of src is executed), or
// scans their tokens when no interpreter is found; other files give nil.
func (Language) CheckPolicy(ctx context.Context, rel string, src []byte, opts lang.PolicyOptions) ([]lang.PolicyFinding, error) {
	out := pluginEntry(rel, src)
	switch path.Ext(rel) {
	case ".py", ".pyi":
		var fs []lang.PolicyFinding
		var err error
		if opts.Parser != nil {
			fs, err = opts.Parser.ParsePolicy(ctx, src)
		} else {
			fs, err = checkPython(ctx, opts.Python, src)
		}
		if err != nil {
			return nil, err
		}
		out = append(append(out, fs...), lang.ForgeFindings("python", src)...)
	}
	return out, nil
}

// pytest11Re is a pytest11 entry point group in any spelling of a
// packaging file (setup.cfg, setup.py, pyproject.toml, entry_points.txt).
var pytest11Re = regexp.MustCompile(`\bpytest11\b`)

// pluginEntry finds files that Python or pytest load without any import
// in the project's code: installed-package metadata (a pytest11 entry point
// in a new *.dist-info folder is a plugin in every run), .pth files and
// the interpreter's customize modules. They are blocked in every file,
// test or not: no fix of the code under test needs one.
func pluginEntry(rel string, src []byte) []lang.PolicyFinding {
	base := path.Base(rel)
	for _, dir := range strings.Split(path.Dir(rel), "/") {
		if strings.HasSuffix(dir, ".dist-info") || strings.HasSuffix(dir, ".egg-info") {
			return []lang.PolicyFinding{{Rule: "python.plugin-entry", Message: "installed-package metadata (" + dir + ") that Python reads by itself", Always: true}}
		}
	}
	switch {
	case base == "entry_points.txt" || strings.HasSuffix(base, ".pth"):
		return []lang.PolicyFinding{{Rule: "python.plugin-entry", Message: base + ", which Python reads by itself", Always: true}}
	case base == "sitecustomize.py" || base == "usercustomize.py":
		return []lang.PolicyFinding{{Rule: "python.plugin-entry", Message: base + ", which the interpreter imports at start", Always: true}}
	}
	if m := pytest11Re.FindIndex(src); m != nil {
		return []lang.PolicyFinding{{Rule: "python.plugin-entry", Line: lang.LineOf(src, m[0]), Message: "a pytest11 entry point (a pytest plugin loaded into every run)", Always: true}}
	}
	return nil
}

func checkPython(ctx context.Context, py string, src []byte) ([]lang.PolicyFinding, error) {
	if py == "" {
		py, _ = exec.LookPath("python3")
	}
	if py == "" {
		return scanPython(src), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// -I: isolated (no user site, no PYTHON* env, no cwd on sys.path);
	// -S: no site module. Nothing from the workspace is imported.
	cmd := exec.CommandContext(ctx, py, "-I", "-S", "-c", pythonChecker)
	cmd.Stdin = bytes.NewReader(src)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("python parser: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var pf []pyFinding
	if err := json.Unmarshal(out, &pf); err != nil {
		return nil, fmt.Errorf("python parser output: %w", err)
	}
	return pyFindings(pf), nil
}

func pyFindings(pf []pyFinding) []lang.PolicyFinding {
	var fs []lang.PolicyFinding
	for _, f := range pf {
		fs = append(fs, lang.PolicyFinding{Rule: f.Rule, Line: f.Line, Message: f.Message, Always: f.Force == "block"})
	}
	return fs
}

var (
	pyImportRe = regexp.MustCompile(`(?m)^\s*(?:import\s+([\w.]+)|from\s+([\w.]+)\s+import)`)
	pyCallRe   = regexp.MustCompile(`\bos\.(system|popen|exec\w*|spawn\w*)\s*\(`)
	pyEvalRe   = regexp.MustCompile(`(?:^|[^\w.])(eval|exec)\s*\(\s*([^\s)])`)
	pyRmtreeRe = regexp.MustCompile(`\bshutil\.rmtree\s*\(`)
	pyExitRe   = regexp.MustCompile(`\batexit\b|\bos\s*\.\s*(?:_exit|kill|killpg|abort)\b`)
	// Assertion tampering, by tokens: an assignment to a unittest/pytest
	// attribute or to builtins.AssertionError, setattr on one of them, and
	// __eq__/__ne__/__hash__ whose body is one constant return.
	pyTamperRe    = regexp.MustCompile(`(?m)^[ \t]*((?:unittest|pytest|_pytest|TestCase)(?:\s*\.\s*\w+)+|(?:builtins|__builtins__)\s*\.\s*AssertionError)\s*(?:=[^=]|\+=)`)
	pyModTamperRe = regexp.MustCompile(`(?m)^[ \t]*((?:\w+\s*\.\s*modules\s*(?:\[[^\]\n]*\]|\.\s*get\s*\([^)\n]*\))|(?:importlib\s*\.\s*)?import_module\s*\([^)\n]*\)|__import__\s*\([^)\n]*\))(?:\s*\.\s*\w+)+)\s*(?:=[^=]|\+=)`)
	pySetattrRe   = regexp.MustCompile(`\b(?:setattr|delattr|__setattr__|patch\.object)\s*\(\s*((?:unittest|pytest|_pytest|TestCase|builtins)\b[\w.]*)`)
	pyConstEqRe   = regexp.MustCompile(`(?m)^[ \t]*def\s+(__(?:eq|ne|hash)__)\s*\([^)]*\)\s*(?:->[^:\n]+)?:\s*(?:\n[ \t]*)?return\s+(True|False|-?\d+)[ \t]*$`)
)

// scanPython is the fallback when no interpreter is available: comments and
// strings are blanked first, so text inside them never matches.
func scanPython(src []byte) []lang.PolicyFinding {
	code := blankPython(src)
	var out []lang.PolicyFinding
	mods := map[string]string{"subprocess": "python.subprocess", "socket": "python.socket", "ctypes": "python.ctypes"}
	for _, m := range pyImportRe.FindAllSubmatchIndex(code, -1) {
		name := ""
		if m[2] >= 0 {
			name = string(code[m[2]:m[3]])
		} else {
			name = string(code[m[4]:m[5]])
		}
		if rule, ok := mods[strings.Split(name, ".")[0]]; ok {
			out = append(out, lang.PolicyFinding{Rule: rule, Line: lang.LineOf(code, m[0]), Message: "importing " + name})
		}
	}
	for _, m := range pyCallRe.FindAllIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "python.os-system", Line: lang.LineOf(code, m[0]), Message: "calling " + strings.TrimSpace(strings.TrimSuffix(string(code[m[0]:m[1]]), "("))})
	}
	for _, m := range pyEvalRe.FindAllSubmatchIndex(code, -1) {
		if c := code[m[4]]; c != '"' && c != '\'' {
			out = append(out, lang.PolicyFinding{Rule: "python.eval-exec", Line: lang.LineOf(code, m[2]), Message: "calling " + string(code[m[2]:m[3]]) + " on a non-literal"})
		}
	}
	for _, m := range pyTamperRe.FindAllSubmatchIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "python.assert-tamper", Line: lang.LineOf(code, m[2]), Message: "rebinding " + despace(code[m[2]:m[3]]) + " from non-test code"})
	}
	for _, m := range pySetattrRe.FindAllSubmatchIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "python.assert-tamper", Line: lang.LineOf(code, m[0]), Message: "rebinding " + despace(code[m[2]:m[3]]) + " from non-test code"})
	}
	// A module reached by name (sys.modules[...], sys.modules.get(...),
	// import_module(...), __import__(...)) whose members are assigned: the
	// scanner cannot read the name, so any such rebinding counts.
	for _, m := range pyModTamperRe.FindAllSubmatchIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "python.assert-tamper", Line: lang.LineOf(code, m[2]), Message: "rebinding a member of a module reached by name (" + despace(code[m[2]:m[3]]) + ") from non-test code"})
	}
	for _, m := range pyConstEqRe.FindAllSubmatchIndex(code, -1) {
		if prev := bytes.TrimRight(code[:m[0]], " \t\n"); bytes.HasSuffix(prev, []byte("abstractmethod")) {
			continue // an abstract method's placeholder body
		}
		name, v := string(code[m[2]:m[3]]), string(code[m[4]:m[5]])
		if name == "__eq__" && (v == "False" || v == "0") || name == "__ne__" && v != "False" && v != "0" {
			continue // never equal: no assertion passes because of it
		}
		out = append(out, lang.PolicyFinding{Rule: "python.constant-eq", Line: lang.LineOf(code, m[2]), Message: string(code[m[2]:m[3]]) + " always returns " + string(code[m[4]:m[5]])})
	}
	for _, m := range pyExitRe.FindAllIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "python.exit-hook", Line: lang.LineOf(code, m[0]), Message: "using " + despace(code[m[0]:m[1]])})
	}
	for _, m := range pyRmtreeRe.FindAllIndex(code, -1) {
		out = append(out, lang.PolicyFinding{Rule: "python.shutil-rmtree", Line: lang.LineOf(code, m[0]), Message: "calling shutil.rmtree"})
	}
	return out
}

// blankPython replaces the contents of comments and string literals with
// spaces, keeping newlines so line numbers stay right.
func blankPython(src []byte) []byte {
	b := append([]byte(nil), src...)
	for i := 0; i < len(b); {
		switch {
		case b[i] == '#':
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case b[i] == '"' || b[i] == '\'':
			q := b[i]
			triple := i+2 < len(b) && b[i+1] == q && b[i+2] == q
			i = blankString(b, i, q, triple)
		default:
			i++
		}
	}
	return b
}

func blankString(b []byte, i int, q byte, triple bool) int {
	n := 1
	if triple {
		n = 3
	}
	i += n
	for i < len(b) {
		if b[i] == '\\' && i+1 < len(b) {
			b[i] = ' '
			if b[i+1] != '\n' {
				b[i+1] = ' '
			}
			i += 2
			continue
		}
		if b[i] == q && (!triple || (i+2 < len(b) && b[i+1] == q && b[i+2] == q)) {
			return i + n
		}
		if b[i] == '\n' && !triple {
			return i
		}
		if b[i] != '\n' {
			b[i] = ' '
		}
		i++
	}
	return i
}

func despace(b []byte) string { return strings.Join(strings.Fields(string(b)), "") }

// SystemPython is the first system interpreter found, or "" (then a
// check looks on PATH). A version manager's shim on PATH (pyenv's is a
// shell script) costs ~80 ms per check, and any Python 3 parses the same.
func SystemPython() string {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}
