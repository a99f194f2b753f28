#!/usr/bin/env python3
"""Generate memory/memorytest/testdata/errors: real Go, Python and Node failure outputs.

Each case is a root cause with two variants (a, b) that differ in file names,
identifiers and values; distractor cases (x) have one variant only. Every
program runs in its own fresh temporary directory with the real toolchain
(go test, python3, node), so paths, addresses, goroutine ids and timings are
genuine. Run from the repository root:  python3 memory/testdata/gen/gen.py
"""
import os, subprocess, sys, tempfile, textwrap

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "memorytest", "testdata", "errors")

def go_case(name, files, params):
    return ("go", name, files, params)

def py_case(name, files, params):
    return ("python", name, files, params)

def js_case(name, files, params):
    return ("node", name, files, params)

A = lambda **kw: kw

GO = [
 go_case("nil-map", {"{file}.go": "package {pkg}\n\nfunc {Fn}(k string) map[string]int {{\n\tvar m map[string]int\n\tm[k] = {v}\n\treturn m\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\t{Fn}(\"{key}\")\n}}\n"},
   [A(pkg="cache", file="store", Fn="Remember", v=1, key="alpha"), A(pkg="registry", file="index", Fn="RegisterUser", v=42, key="bob")]),
 go_case("index-range", {"{file}.go": "package {pkg}\n\nfunc {Fn}(xs []int) int {{\n\treturn xs[{v}]\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\tif {Fn}([]int{{1, 2}}) != 0 {{\n\t\tt.Fatal(\"x\")\n\t}}\n}}\n"},
   [A(pkg="stats", file="median", Fn="Median", v=5), A(pkg="queue", file="ring", Fn="PeekLast", v=9)]),
 go_case("nil-deref", {"{file}.go": "package {pkg}\n\ntype {T} struct{{ {Field} int }}\n\nfunc {Fn}(p *{T}) int {{\n\treturn p.{Field} + {v}\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\t_ = {Fn}(nil)\n}}\n"},
   [A(pkg="server", file="conn", T="Conn", Field="Timeout", Fn="Deadline", v=3), A(pkg="billing", file="invoice", T="Invoice", Field="Total", Fn="WithTax", v=17)]),
 go_case("slice-bounds", {"{file}.go": "package {pkg}\n\nfunc {Fn}(s string) string {{\n\treturn s[:{v}]\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\t_ = {Fn}(\"{arg}\")\n}}\n"},
   [A(pkg="text", file="trunc", Fn="Truncate", v=10, arg="abc"), A(pkg="ids", file="short", Fn="ShortHash", v=12, arg="deadbeef")]),
 go_case("type-assert", {"{file}.go": "package {pkg}\n\nfunc {Fn}(v any) {typ} {{\n\treturn v.({typ})\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\t_ = {Fn}({arg})\n}}\n"},
   [A(pkg="config", file="value", Fn="AsString", typ="string", arg="42"), A(pkg="event", file="payload", Fn="AsInt", typ="int", arg="\"x\"")]),
 go_case("closed-channel", {"{file}.go": "package {pkg}\n\ntype {T} struct{{ ch chan int }}\n\nfunc (w *{T}) {Fn}() {{\n\tclose(w.ch)\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\tw := &{T}{{ch: make(chan int, {v})}}\n\tw.{Fn}()\n\tw.{Fn}()\n}}\n"},
   [A(pkg="pool", file="worker", T="Worker", Fn="Stop", v=1), A(pkg="pubsub", file="topic", T="Topic", Fn="Shutdown", v=8)]),
 go_case("assert-int", {"{file}.go": "package {pkg}\n\nfunc {Fn}(a, b int) int {{\n\treturn a - b\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\tif got := {Fn}({x}, {y}); got != {want} {{\n\t\tt.Errorf(\"{Fn}({x}, {y}) = %d, want %d\", got, {want})\n\t}}\n}}\n"},
   [A(pkg="calc", file="add", Fn="Add", x=2, y=3, want=5), A(pkg="money", file="sum", Fn="Total", x=40, y=2, want=42)]),
 go_case("deepequal-slice", {"{file}.go": "package {pkg}\n\nfunc {Fn}(xs []string) []string {{\n\treturn xs[1:]\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport (\n\t\"reflect\"\n\t\"testing\"\n)\n\nfunc Test{Fn}(t *testing.T) {{\n\tin := []string{{{items}}}\n\tif got := {Fn}(in); !reflect.DeepEqual(got, in) {{\n\t\tt.Errorf(\"{Fn}() = %v, want %v\", got, in)\n\t}}\n}}\n"},
   [A(pkg="words", file="dedupe", Fn="Dedupe", items='"a", "b", "c"'), A(pkg="tags", file="normalize", Fn="NormalizeTags", items='"Go", "Rust"')]),
 go_case("undefined", {"{file}.go": "package {pkg}\n\nfunc {Fn}() int {{\n\treturn {missing}({v})\n}}\n"},
   [A(pkg="render", file="page", Fn="Render", missing="formatHeader", v=1), A(pkg="auth", file="token", Fn="Issue", missing="signClaims", v=7)]),
 go_case("unused-var", {"{file}.go": "package {pkg}\n\nfunc {Fn}() int {{\n\t{var} := {v}\n\treturn 0\n}}\n"},
   [A(pkg="geo", file="dist", Fn="Distance", var="delta", v=3), A(pkg="shop", file="cart", Fn="Checkout", var="discount", v=10)]),
 go_case("type-mismatch", {"{file}.go": "package {pkg}\n\nfunc {Fn}() string {{\n\t{var} := {v}\n\treturn {var}\n}}\n"},
   [A(pkg="label", file="name", Fn="Label", var="count", v=3), A(pkg="report", file="title", Fn="Title", var="pages", v=120)]),
 go_case("missing-return", {"{file}.go": "package {pkg}\n\nfunc {Fn}(x int) int {{\n\tif x > {v} {{\n\t\treturn x\n\t}}\n}}\n"},
   [A(pkg="limit", file="clamp", Fn="Clamp", v=5), A(pkg="score", file="bonus", Fn="Bonus", v=99)]),
 go_case("unused-import", {"{file}.go": "package {pkg}\n\nimport \"{imp}\"\n\nfunc {Fn}() int {{ return {v} }}\n"},
   [A(pkg="feed", file="rss", Fn="Items", imp="strings", v=1), A(pkg="mail", file="smtp", Fn="Port", imp="os", v=25)]),
 go_case("timeout", {"{file}.go": "package {pkg}\n\nimport \"time\"\n\nfunc {Fn}() {{\n\tfor {{\n\t\ttime.Sleep({v} * time.Millisecond)\n\t}}\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\t{Fn}()\n}}\n"},
   [A(pkg="poll", file="loop", Fn="WaitReady", v=10), A(pkg="sync2", file="spin", Fn="AwaitLeader", v=25)]),
 go_case("file-not-found", {"{file}_test.go": "package {pkg}\n\nimport (\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n)\n\nfunc Test{Fn}(t *testing.T) {{\n\t_, err := os.ReadFile(filepath.Join(t.TempDir(), \"{fname}\"))\n\tif err != nil {{\n\t\tt.Fatal(err)\n\t}}\n}}\n"},
   [A(pkg="loader", file="config", Fn="LoadConfig", fname="config.json"), A(pkg="assets", file="theme", Fn="ReadTheme", fname="theme.yaml")]),
 go_case("json-unmarshal", {"{file}_test.go": "package {pkg}\n\nimport (\n\t\"encoding/json\"\n\t\"testing\"\n)\n\ntype {T} struct {{\n\t{Field} int `json:\"{key}\"`\n}}\n\nfunc Test{Fn}(t *testing.T) {{\n\tvar v {T}\n\tif err := json.Unmarshal([]byte(`{{\"{key}\": \"{val}\"}}`), &v); err != nil {{\n\t\tt.Fatalf(\"decode: %v\", err)\n\t}}\n}}\n"},
   [A(pkg="api", file="decode", T="User", Field="Age", key="age", val="ten", Fn="DecodeUser"), A(pkg="orders", file="parse", T="Order", Field="Qty", key="qty", val="3", Fn="ParseOrder")]),
 go_case("atoi", {"{file}_test.go": "package {pkg}\n\nimport (\n\t\"strconv\"\n\t\"testing\"\n)\n\nfunc Test{Fn}(t *testing.T) {{\n\tn, err := strconv.Atoi(\"{val}\")\n\tif err != nil {{\n\t\tt.Fatalf(\"parse {what}: %v\", err)\n\t}}\n\t_ = n\n}}\n"},
   [A(pkg="flags", file="port", Fn="ParsePort", val="80a", what="port"), A(pkg="csvx", file="row", Fn="ParseRow", val="12.5", what="count")]),
 go_case("divide-zero", {"{file}.go": "package {pkg}\n\nfunc {Fn}(total, n int) int {{\n\treturn total / n\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\t_ = {Fn}({v}, 0)\n}}\n"},
   [A(pkg="avg", file="mean", Fn="Mean", v=10), A(pkg="quota", file="share", Fn="PerUser", v=300)]),
 go_case("waitgroup", {"{file}.go": "package {pkg}\n\nimport \"sync\"\n\nfunc {Fn}(n int) {{\n\tvar wg sync.WaitGroup\n\tfor i := 0; i < n; i++ {{\n\t\twg.Done()\n\t}}\n\twg.Wait()\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\t{Fn}({v})\n}}\n"},
   [A(pkg="fanout", file="group", Fn="RunAll", v=2), A(pkg="crawler", file="fetch", Fn="FetchPages", v=5)]),
 go_case("custom-panic", {"{file}.go": "package {pkg}\n\nimport \"fmt\"\n\nfunc {Fn}(s int) {{\n\tpanic(fmt.Sprintf(\"unexpected state %d\", s))\n}}\n",
   "{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\t{Fn}({v})\n}}\n"},
   [A(pkg="fsm", file="machine", Fn="Transition", v=3), A(pkg="lexer", file="scan", Fn="Advance", v=7)]),
 go_case("conn-refused", {"{file}_test.go": "package {pkg}\n\nimport (\n\t\"net\"\n\t\"net/http\"\n\t\"testing\"\n)\n\nfunc Test{Fn}(t *testing.T) {{\n\tl, _ := net.Listen(\"tcp\", \"127.0.0.1:0\")\n\taddr := l.Addr().String()\n\tl.Close()\n\t_, err := http.Get(\"http://\" + addr + \"{path}\")\n\tif err != nil {{\n\t\tt.Fatal(err)\n\t}}\n}}\n"},
   [A(pkg="client", file="health", Fn="Health", path="/healthz"), A(pkg="webhook", file="notify", Fn="Notify", path="/hooks/push")]),
 go_case("ctx-deadline", {"{file}_test.go": "package {pkg}\n\nimport (\n\t\"context\"\n\t\"testing\"\n\t\"time\"\n)\n\nfunc Test{Fn}(t *testing.T) {{\n\tctx, cancel := context.WithTimeout(context.Background(), {v}*time.Millisecond)\n\tdefer cancel()\n\t<-ctx.Done()\n\tt.Fatalf(\"{what}: %v\", ctx.Err())\n}}\n"},
   [A(pkg="rpc", file="call", Fn="CallTimeout", v=5, what="call"), A(pkg="db", file="query", Fn="SlowQuery", v=20, what="query users")]),
 go_case("x-error-string", {"{file}_test.go": "package {pkg}\n\nimport (\n\t\"errors\"\n\t\"testing\"\n)\n\nfunc Test{Fn}(t *testing.T) {{\n\terr := errors.New(\"permission denied\")\n\tt.Fatalf(\"save: %v\", err)\n}}\n"},
   [A(pkg="store", file="save", Fn="Save")]),
 go_case("x-goroutine-panic", {"{file}_test.go": "package {pkg}\n\nimport (\n\t\"sync\"\n\t\"testing\"\n)\n\nfunc Test{Fn}(t *testing.T) {{\n\tvar wg sync.WaitGroup\n\twg.Add(1)\n\tgo func() {{\n\t\tdefer wg.Done()\n\t\tvar s []int\n\t\t_ = append(s, 1)[3]\n\t}}()\n\twg.Wait()\n}}\n"},
   [A(pkg="workers", file="bg", Fn="Background")]),
 go_case("x-skip-fail", {"{file}_test.go": "package {pkg}\n\nimport \"testing\"\n\nfunc Test{Fn}(t *testing.T) {{\n\tt.Run(\"empty\", func(t *testing.T) {{ t.Error(\"expected an error for empty input\") }})\n}}\n"},
   [A(pkg="valid", file="input", Fn="Validate")]),
]

PY = [
 py_case("key-error", {"{file}.py": "def {fn}(d):\n    return d['{key}']\n\n{fn}({{'{other}': {v}}})\n"},
   [A(file="settings", fn="get_timeout", key="timeout", other="retries", v=3), A(file="users", fn="lookup_email", key="email", other="name", v="'ann'")]),
 py_case("index-error", {"{file}.py": "def {fn}(xs):\n    return xs[{v}]\n\n{fn}([1, 2])\n"},
   [A(file="scores", fn="third_best", v=2), A(file="history", fn="last_but_nine", v=-10)]),
 py_case("none-attr", {"{file}.py": "import re\n\ndef {fn}(s):\n    m = re.match(r'{pat}', s)\n    return m.{attr}(1)\n\n{fn}('{arg}')\n"},
   [A(file="version", fn="parse_version", pat="v(\\\\d+)", attr="group", arg="release"), A(file="headers", fn="content_length", pat="Length: (\\\\d+)", attr="group", arg="Type: json")]),
 py_case("type-add", {"{file}.py": "def {fn}(a, b):\n    return a + b\n\n{fn}({x}, '{y}')\n"},
   [A(file="totals", fn="add_tax", x=10, y="2"), A(file="counter", fn="bump", x=1, y="one")]),
 py_case("missing-arg", {"{file}.py": "class {Cls}:\n    def __init__(self, {a}, {b}):\n        self.{a} = {a}\n\n{Cls}({v})\n"},
   [A(file="shapes", Cls="Rect", a="width", b="height", v=3), A(file="accounts", Cls="Account", a="owner", b="balance", v="'ann'")]),
 py_case("zero-div", {"{file}.py": "def {fn}(total, n):\n    return total / n\n\nprint({fn}({v}, 0))\n"},
   [A(file="metrics", fn="average", v=10), A(file="split", fn="per_person", v=99)]),
 py_case("int-parse", {"{file}.py": "def {fn}(s):\n    return int(s)\n\n{fn}('{val}')\n"},
   [A(file="cli", fn="parse_port", val="80a"), A(file="csvload", fn="read_count", val="twelve")]),
 py_case("module-not-found", {"{file}.py": "import {mod}\n\nprint({mod}.{attr})\n"},
   [A(file="client", mod="numpy", attr="array"), A(file="plots", mod="matplotlib", attr="pyplot")]),
 py_case("file-not-found", {"{file}.py": "def {fn}():\n    with open('{path}') as f:\n        return f.read()\n\n{fn}()\n"},
   [A(file="config", fn="load_config", path="settings.toml"), A(file="assets", fn="read_template", path="templates/base.html")]),
 py_case("unittest-equal", {"test_{file}.py": "import unittest\n\ndef {fn}(a, b):\n    return a * b\n\nclass {Cls}(unittest.TestCase):\n    def test_{fn}(self):\n        self.assertEqual({fn}({x}, {y}), {want})\n\nif __name__ == '__main__':\n    unittest.main()\n"},
   [A(file="math", fn="add", Cls="TestMath", x=2, y=2, want=5), A(file="price", fn="total", Cls="TestPrice", x=3, y=7, want=20)]),
 py_case("unittest-list", {"test_{file}.py": "import unittest\n\ndef {fn}(xs):\n    return sorted(set(xs))[:-1]\n\nclass {Cls}(unittest.TestCase):\n    def test_{fn}(self):\n        self.assertEqual({fn}({arg}), {want})\n\nif __name__ == '__main__':\n    unittest.main()\n"},
   [A(file="dedupe", fn="unique", Cls="TestUnique", arg="[3, 1, 3, 2]", want="[1, 2, 3]"), A(file="tags", fn="normalize_tags", Cls="TestTags", arg="['go', 'py']", want="['go', 'py']")]),
 py_case("recursion", {"{file}.py": "def {fn}(n):\n    return n * {fn}(n - 1)\n\n{fn}({v})\n"},
   [A(file="fact", fn="factorial", v=5), A(file="tree", fn="depth", v=10)]),
 py_case("name-error", {"{file}.py": "def {fn}(x):\n    return x + {missing}\n\n{fn}({v})\n"},
   [A(file="pricing", fn="with_fee", missing="FEE", v=1), A(file="geometry", fn="circumference", missing="PI2", v=3)]),
 py_case("json-decode", {"{file}.py": "import json\n\ndef {fn}(s):\n    return json.loads(s)\n\n{fn}('{val}')\n"},
   [A(file="api", fn="parse_body", val=""), A(file="cache", fn="load_entry", val="<html>")]),
 py_case("unbound-local", {"{file}.py": "{var} = 0\n\ndef {fn}():\n    {var} += {v}\n    return {var}\n\n{fn}()\n"},
   [A(file="counter", var="count", fn="increment", v=1), A(file="ids", var="next_id", fn="allocate", v=5)]),
 py_case("syntax-colon", {"{file}.py": "def {fn}(x)\n    return x * {v}\n"},
   [A(file="double", fn="twice", v=2), A(file="scale", fn="scale_up", v=10)]),
 py_case("indentation", {"{file}.py": "def {fn}(x):\n    if x:\n    return {v}\n"},
   [A(file="check", fn="is_ok", v=1), A(file="guard", fn="allowed", v=0)]),
 py_case("import-name", {"{file}.py": "from {mod} import {name}\n"},
   [A(file="paths", mod="os.path", name="joinpath"), A(file="colls", mod="collections", name="OrderedSet")]),
 py_case("dict-changed", {"{file}.py": "def {fn}(d):\n    for k in d:\n        if d[k] == {v}:\n            del d[k]\n\n{fn}({{'a': {v}, 'b': 2, 'c': {v}}})\n"},
   [A(file="prune", fn="drop_zeros", v=0), A(file="cleanup", fn="remove_expired", v=-1)]),
 py_case("conn-refused", {"{file}.py": "import socket\n\ndef {fn}():\n    s = socket.socket()\n    s.bind(('127.0.0.1', 0))\n    port = s.getsockname()[1]\n    s.close()\n    return socket.create_connection(('127.0.0.1', port), timeout=1)\n\n{fn}()\n"},
   [A(file="health", fn="ping_server"), A(file="queue", fn="connect_broker")]),
 py_case("none-subscript", {"{file}.py": "def {fn}():\n    return None\n\nprint({fn}()['{key}'])\n"},
   [A(file="db", fn="find_user", key="name"), A(file="geo", fn="lookup_city", key="lat")]),
 py_case("module-attr", {"{file}.py": "import {mod}\n\n{mod}.{attr}()\n"},
   [A(file="timing", mod="time", attr="now"), A(file="rand", mod="random", attr="randint_between")]),
 py_case("x-value-unpack", {"{file}.py": "a, b = [1, 2, 3]\n"}, [A(file="unpack")]),
 py_case("x-keyboard-assert", {"{file}.py": "assert {v} == 2, 'bad config'\n"}, [A(file="assert_cfg", v=3)]),
 py_case("x-permission", {"{file}.py": "open('/proc/1/mem', 'rb').read(1)\n"}, [A(file="perm")]),
]

JS = [
 js_case("undefined-prop", {"{file}.js": "function {fn}(o) {{\n  return o.{a}.{b};\n}}\n{fn}({{}});\n"},
   [A(file="profile", fn="getCity", a="address", b="city"), A(file="order", fn="shippingCost", a="shipping", b="cost")]),
 js_case("not-a-function", {"{file}.js": "const {obj} = {{ {m}: {v} }};\nfunction {fn}() {{\n  return {obj}.{m}();\n}}\n{fn}();\n"},
   [A(file="logger", obj="log", m="info", v=1, fn="start"), A(file="store", obj="cache", m="flush", v="'x'", fn="persist")]),
 js_case("reference-error", {"{file}.js": "function {fn}(x) {{\n  return x * {missing};\n}}\n{fn}({v});\n"},
   [A(file="tax", fn="withTax", missing="TAX_RATE", v=10), A(file="circle", fn="area", missing="PI", v=2)]),
 js_case("strict-equal", {"{file}.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nfunction {fn}(a, b) {{ return a - b; }}\ntest('{fn} works', () => {{\n  assert.strictEqual({fn}({x}, {y}), {want});\n}});\n"},
   [A(file="math", fn="add", x=2, y=3, want=5), A(file="money", fn="total", x=40, y=2, want=42)]),
 js_case("deep-equal", {"{file}.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nfunction {fn}(xs) {{ return xs.slice(1); }}\ntest('{fn} keeps items', () => {{\n  assert.deepStrictEqual({fn}({arg}), {arg});\n}});\n"},
   [A(file="dedupe", fn="unique", arg="[1, 2, 3]"), A(file="tags", fn="normalizeTags", arg="['go', 'js']")]),
 js_case("json-parse", {"{file}.js": "function {fn}(s) {{\n  return JSON.parse(s);\n}}\n{fn}('{val}');\n"},
   [A(file="api", fn="parseBody", val="<html>"), A(file="cache", fn="loadEntry", val="undefined")]),
 js_case("stack-overflow", {"{file}.js": "function {fn}(n) {{\n  return n * {fn}(n - 1);\n}}\n{fn}({v});\n"},
   [A(file="fact", fn="factorial", v=5), A(file="tree", fn="depth", v=10)]),
 js_case("module-not-found", {"{file}.js": "const {var} = require('{mod}');\n{var}();\n"},
   [A(file="server", var="express", mod="express"), A(file="dates", var="moment", mod="moment")]),
 js_case("enoent", {"{file}.js": "const fs = require('fs');\nfunction {fn}() {{\n  return fs.readFileSync('{path}', 'utf8');\n}}\n{fn}();\n"},
   [A(file="config", fn="loadConfig", path="config.json"), A(file="tmpl", fn="readTemplate", path="views/index.html")]),
 js_case("const-assign", {"{file}.js": "const {var} = {v};\nfunction {fn}() {{\n  {var} = {var} + 1;\n}}\n{fn}();\n"},
   [A(file="counter", var="count", v=0, fn="increment"), A(file="ids", var="nextId", v=100, fn="allocate")]),
 js_case("unhandled-rejection", {"{file}.js": "async function {fn}() {{\n  throw new Error('{msg}');\n}}\n{fn}();\n"},
   [A(file="fetcher", fn="fetchUser", msg="user not found"), A(file="sync", fn="syncOrders", msg="order not found")]),
 js_case("syntax-error", {"{file}.js": "function {fn}(x) {{\n  return x {op} {v}\n}}\n"},
   [A(file="double", fn="twice", op="**2", v="y z"), A(file="scale", fn="scaleUp", op="*", v="factor amount")]),
 js_case("conn-refused", {"{file}.js": "const net = require('net');\nconst srv = net.createServer();\nsrv.listen(0, '127.0.0.1', () => {{\n  const port = srv.address().port;\n  srv.close(() => {{\n    const c = net.connect(port, '127.0.0.1');\n    c.on('connect', () => {{}});\n  }});\n}});\n"},
   [A(file="health"), A(file="broker")]),
 js_case("null-prop", {"{file}.js": "function {fn}(s) {{\n  return s.match(/{pat}/)[1];\n}}\n{fn}('{arg}');\n"},
   [A(file="version", fn="parseVersion", pat="v(\\\\d+)", arg="release"), A(file="headers", fn="contentLength", pat="Length: (\\\\d+)", arg="Type: json")]),
 js_case("array-length", {"{file}.js": "function {fn}(n) {{\n  return new Array(n);\n}}\n{fn}({v});\n"},
   [A(file="buffer", fn="makeSlots", v=-1), A(file="grid", fn="makeRow", v=-5)]),
 js_case("not-iterable", {"{file}.js": "function {fn}(x) {{\n  for (const item of x) {{ console.log(item); }}\n}}\n{fn}({v});\n"},
   [A(file="list", fn="printAll", v=5), A(file="batch", fn="processBatch", v="{}")]),
 js_case("custom-throw", {"{file}.js": "function {fn}(s) {{\n  throw new Error(`invalid state: ${{s}}`);\n}}\n{fn}({v});\n"},
   [A(file="fsm", fn="transition", v=3), A(file="lexer", fn="advance", v=7)]),
 js_case("bigint-mix", {"{file}.js": "function {fn}(a) {{\n  return a + {v};\n}}\n{fn}(10n);\n"},
   [A(file="ids", fn="nextId", v=1), A(file="ledger", fn="addCents", v=250)]),
 js_case("circular-json", {"{file}.js": "function {fn}() {{\n  const {var} = {{ name: 'x' }};\n  {var}.self = {var};\n  return JSON.stringify({var});\n}}\n{fn}();\n"},
   [A(file="state", fn="serialize", var="state"), A(file="graph", fn="dumpNode", var="node")]),
 js_case("invalid-arg-type", {"{file}.js": "const fs = require('fs');\nfunction {fn}(p) {{\n  return fs.readFileSync(p);\n}}\n{fn}({v});\n"},
   [A(file="reader", fn="readInput", v="null"), A(file="loader", fn="loadFile", v="undefined")]),
 js_case("x-type-undefined-call", {"{file}.js": "let cb;\ncb();\n"}, [A(file="callback")]),
 js_case("x-assert-ok", {"{file}.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\ntest('is truthy', () => {{ assert.ok(0); }});\n"}, [A(file="truthy")]),
 js_case("x-uri", {"{file}.js": "decodeURIComponent('%');\n"}, [A(file="uri")]),
]


def run(lang, files, params, tmp):
    for name, content in files.items():
        path = os.path.join(tmp, name.format(**params))
        with open(path, "w") as f:
            f.write(content.format(**params))
    env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
    if lang == "go":
        with open(os.path.join(tmp, "go.mod"), "w") as f:
            f.write("module example.com/%s\n\ngo 1.26\n" % params["pkg"])
        cmd = ["go", "test", "-vet=off", "-timeout", "2s", "."]
    elif lang == "python":
        main = [n.format(**params) for n in files][0]
        cmd = ["python3", main]
    else:
        main = [n.format(**params) for n in files][0]
        cmd = ["node", "--test", main] if main.endswith(".test.js") else ["node", main]
    p = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
    return p.stdout + p.stderr


def main():
    os.makedirs(OUT, exist_ok=True)
    only = sys.argv[1:]
    for lang, name, files, params in GO + PY + JS:
        case = "%s-%s" % (lang, name)
        if only and case not in only:
            continue
        for label, p in zip("ab", params):
            if len(params) == 1:
                label = "x"
            tmp = tempfile.mkdtemp(prefix="fp-%s-" % p.get("file", "x"))
            out = run(lang, files, p, tmp)
            if not out.strip():
                print("EMPTY", case, label, file=sys.stderr)
            with open(os.path.join(OUT, "%s.%s.txt" % (case, label)), "w") as f:
                f.write(out)
        print(case, file=sys.stderr)

main()
