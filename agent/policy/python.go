package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
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
print(json.dumps(out))
`

type pyFinding struct {
	Rule    string `json:"rule"`
	Line    int    `json:"line"`
	Message string `json:"message"`
	Force   string `json:"force"`
}

func (c *Checker) checkPython(ctx context.Context, rel string, src []byte) ([]Finding, error) {
	py := c.python
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
	var fs []Finding
	for _, f := range pf {
		fs = append(fs, Finding{Rule: f.Rule, Line: f.Line, Message: f.Message, always: f.Force == "block"})
	}
	return fs, nil
}

var (
	pyImportRe = regexp.MustCompile(`(?m)^\s*(?:import\s+([\w.]+)|from\s+([\w.]+)\s+import)`)
	pyCallRe   = regexp.MustCompile(`\bos\.(system|popen|exec\w*|spawn\w*)\s*\(`)
	pyEvalRe   = regexp.MustCompile(`(?:^|[^\w.])(eval|exec)\s*\(\s*([^\s)])`)
	pyRmtreeRe = regexp.MustCompile(`\bshutil\.rmtree\s*\(`)
)

// scanPython is the fallback when no interpreter is available: comments and
// strings are blanked first, so text inside them never matches.
func scanPython(src []byte) []Finding {
	code := blankPython(src)
	var out []Finding
	mods := map[string]string{"subprocess": "python.subprocess", "socket": "python.socket", "ctypes": "python.ctypes"}
	for _, m := range pyImportRe.FindAllSubmatchIndex(code, -1) {
		name := ""
		if m[2] >= 0 {
			name = string(code[m[2]:m[3]])
		} else {
			name = string(code[m[4]:m[5]])
		}
		if rule, ok := mods[strings.Split(name, ".")[0]]; ok {
			out = append(out, Finding{Rule: rule, Line: lineOf(code, m[0]), Message: "importing " + name})
		}
	}
	for _, m := range pyCallRe.FindAllIndex(code, -1) {
		out = append(out, Finding{Rule: "python.os-system", Line: lineOf(code, m[0]), Message: "calling " + strings.TrimSpace(strings.TrimSuffix(string(code[m[0]:m[1]]), "("))})
	}
	for _, m := range pyEvalRe.FindAllSubmatchIndex(code, -1) {
		if c := code[m[4]]; c != '"' && c != '\'' {
			out = append(out, Finding{Rule: "python.eval-exec", Line: lineOf(code, m[2]), Message: "calling " + string(code[m[2]:m[3]]) + " on a non-literal"})
		}
	}
	for _, m := range pyRmtreeRe.FindAllIndex(code, -1) {
		out = append(out, Finding{Rule: "python.shutil-rmtree", Line: lineOf(code, m[0]), Message: "calling shutil.rmtree"})
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

func lineOf(b []byte, off int) int { return bytes.Count(b[:off], []byte("\n")) + 1 }
