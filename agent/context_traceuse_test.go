package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// Round 9: what the traced code uses. A fix of several hunks edits the
// function that ran and a declaration beside it that no tracer sees run:
// a field of the struct the traced method reads (gorilla/websocket's read
// limit), an entry of the module-level table the traced function indexes
// (tabulate's formats). tracerank.go's weighDataUses ranks such a data
// declaration by what the traced lines use of it.

// connField is the struct's line the fix adds a field beside.
const connField = "\treadRemaining int64 // bytes left in the current frame"

// connProject is a Go package whose long conn.go (several whole files'
// room) declares forty structs, a hundred and twenty methods of Conn and
// forty other functions; the failing test reads frames through an
// interface and a table of constructors, four calls deep, and never names
// Conn, whose Next (traced) reads Conn's fields; the framing code of
// frame.go ran too.
func connProject() map[string]string {
	var b strings.Builder
	b.WriteString("package ws\n\nimport \"errors\"\n\n")
	for i := range 20 {
		fmt.Fprintf(&b, "// opt%02d is one of the options of a dialer.\ntype opt%02d struct {\n\tname%02d string\n\tsize%02d int\n\tflag%02d bool\n}\n\n", i, i, i, i, i)
	}
	b.WriteString(filler("go", "mask", 40))
	b.WriteString("// Conn is a connection.\ntype Conn struct {\n\tbuf []byte\n" + connField + "\n\treadFinal bool // the frame is the message's last\n\treadErr error\n}\n\n")
	for i := 20; i < 40; i++ {
		fmt.Fprintf(&b, "// opt%02d is one of the options of a dialer.\ntype opt%02d struct {\n\tname%02d string\n\tsize%02d int\n\tflag%02d bool\n}\n\n", i, i, i, i, i)
	}
	b.WriteString("// Frames reads frames.\ntype Frames interface {\n\tNext() (int, error)\n}\n\n")
	b.WriteString("// kinds are the constructors of each kind of reader.\nvar kinds = map[string]func([]byte) Frames{}\n\nvar current = \"conn\"\n\n")
	b.WriteString("func init() {\n\tkinds[\"conn\"] = newConn\n}\n\n")
	b.WriteString("// ReadAll reads buf's frames.\nfunc ReadAll(buf []byte) int {\n\treturn count(Open(buf))\n}\n\n")
	b.WriteString("func count(f Frames) int {\n\treturn total(f)\n}\n\n")
	b.WriteString("func total(f Frames) int {\n\treturn drain(f)\n}\n\n")
	b.WriteString("func drain(f Frames) int {\n\tn, _ := f.Next()\n\treturn n\n}\n\n")
	b.WriteString("// Open opens a reader of frames over buf.\nfunc Open(buf []byte) Frames {\n\treturn kinds[current](buf)\n}\n\n")
	b.WriteString("func (c *Conn) Next() (int, error) {\n\tif c.readErr != nil {\n\t\treturn 0, c.readErr\n\t}\n\tif c.readRemaining == 0 && c.readFinal {\n\t\treturn 0, errors.New(\"eof\")\n\t}\n\tn := len(c.buf)\n\tc.readRemaining -= int64(n)\n\treturn n, nil\n}\n\n")
	b.WriteString(connMethods("frame", 60))
	b.WriteString("func newConn(buf []byte) Frames {\n\treturn &Conn{buf: buf}\n}\n\n")
	b.WriteString(connMethods("tail", 60))
	test := "package ws\n\nimport \"testing\"\n\nfunc TestReadLimit(t *testing.T) {\n\tif n := ReadAll([]byte(\"abcd\")); n != 3 {\n\t\tt.Fatalf(\"read %d, want 3\", n)\n\t}\n}\n"
	// The framing code that ran too, in a file of its own: thirty long
	// functions (more than the context's room) whose trace weight
	// outranks what the static walk gives Conn.
	var fr strings.Builder
	fr.WriteString("package ws\n\n")
	for i := range 30 {
		fmt.Fprintf(&fr, "func step%d(x int) int {\n\tacc := x\n%s\treturn acc\n}\n\n", i, bigBody("go", 24))
	}
	return map[string]string{"go.mod": "module example.com/ws\n\ngo 1.22\n", "ws/conn.go": b.String(), "ws/frame.go": fr.String(), "ws/conn_test.go": test}
}

// connMethods are n methods of Conn, each about 300 bytes, that use none
// of its fields.
func connMethods(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "func (c *Conn) %s%d(x int) int {\n%s\treturn x + %d\n}\n\n", prefix, i, strings.Repeat("\tx = x*3 + 1 // unrelated arithmetic\n", 8), i)
	}
	return b.String()
}

// connTrace is what the failing test of connProject runs in conn (its
// conn.go) and frame (its frame.go): the call chain to Conn.Next (drain's
// and Next's bodies), the thirty framing steps and Conn's other methods,
// the plumbing that ran too.
func connTrace(conn, frame string) lang.Trace {
	trace := lang.Trace{}
	for _, d := range []struct {
		decl  string
		lines int
	}{{"func ReadAll(", 2}, {"func count(", 2}, {"func total(", 2}, {"func drain(", 3}, {"func Open(", 2}, {"func newConn(", 2}, {"func (c *Conn) Next(", 10}} {
		l := lineOf(conn, d.decl)
		trace["ws/conn.go"] = append(trace["ws/conn.go"], lang.Span{From: l, To: l + d.lines, Count: 1})
	}
	for i := range 30 {
		l := lineOf(frame, fmt.Sprintf("func step%d(", i))
		trace["ws/frame.go"] = append(trace["ws/frame.go"], lang.Span{From: l, To: l + 26, Count: 1})
	}
	for i := 0; i < 120; i++ {
		l := lineOf(conn, fmt.Sprintf("func (c *Conn) %s%d(", []string{"frame", "tail"}[i%2], i/2))
		trace["ws/conn.go"] = append(trace["ws/conn.go"], lang.Span{From: l, To: l + 9, Count: 1})
	}
	return trace
}

func TestContextTraceUseShowsTheStructTheMethodReads(t *testing.T) {
	src := connProject()
	mod := src["ws/conn.go"]
	if len(mod) < 2*wholeFileMax {
		t.Fatalf("conn.go has %d bytes: the test wants a file well over a whole file's room", len(mod))
	}
	snap := files("go.mod", src["go.mod"], "ws/conn.go", mod, "ws/frame.go", src["ws/frame.go"], "ws/conn_test.go", src["ws/conn_test.go"])
	rep := failing("example.com/ws.TestReadLimit", "ws/conn_test.go", 7)
	rep.Tests[0].Message = "read 4, want 3"
	prompt := tracedPrompt(snap, rep, connTrace(mod, src["ws/frame.go"]))
	if !shown(prompt, "ws/conn.go", "\tc.readRemaining -= int64(n)") {
		t.Fatalf("the traced prompt lacks Conn.Next, which ran:\n%s", sections(prompt))
	}
	if !shown(prompt, "ws/conn.go", "type Conn struct {\n\tbuf []byte\n"+connField) {
		t.Errorf("the traced prompt lacks the Conn struct whose fields the traced method reads:\n%s", sections(prompt))
	}
	for _, o := range []string{"type opt00 struct {", "type opt39 struct {"} {
		if shown(prompt, "ws/conn.go", o) {
			t.Errorf("the prompt shows %q, which no traced line uses", o)
		}
	}
}

// githubEntry is the table entry the fix edits.
const githubEntry = "    \"github\": TableFormat(\n        lineabove=Line(\"|\", \"-\", \"|\", \"|\"),\n        padding=1,\n    ),"

// formatsProject is a Python package whose long module declares a
// module-level table of 120 formats (more than the context's room) (several times traceSplitMin)
// between a hundred functions; the failing test renders with
// tablefmt="github", and the traced tabulate(), itself long, indexes
// the table.
func formatsProject() map[string]string {
	var b strings.Builder
	b.WriteString("import re\n\nfrom collections import namedtuple\n\nTableFormat = namedtuple(\"TableFormat\", [\"lineabove\", \"padding\"])\nLine = namedtuple(\"Line\", [\"begin\", \"hline\", \"sep\", \"end\"])\n\n\n")
	b.WriteString(filler("py", "head_", 50))
	b.WriteString("_table_formats = {\n")
	for i := range 120 {
		if i == 40 {
			b.WriteString(githubEntry + "\n")
			continue
		}
		fmt.Fprintf(&b, "    \"fmt%03d\": TableFormat(\n        lineabove=Line(\"+\", \"%c\", \"+\", \"+\"),\n        padding=%d,\n    ),\n", i, 'a'+i%26, i%3)
		fmt.Fprintf(&b, "    # fmt%03d draws its rules with %c and pads its cells with %d spaces: see the\n    # documentation of the format for how it renders headers, rows and separators.\n", i, 'a'+i%26, i%3)
	}
	b.WriteString("}\n\n\n")
	b.WriteString(filler("py", "mid_", 40))
	b.WriteString("def tabulate(rows, tablefmt=\"simple\"):\n    acc = 0\n" + bigBody("py", 200) + "    fmt = _table_formats.get(tablefmt)\n    out = [fmt.lineabove.begin]\n    for r in rows:\n        out.append(\" | \".join(str(c) for c in r))\n    return \"\\n\".join(out)\n\n\n")
	b.WriteString(filler("py", "tail_", 40))
	test := "from tabulate import tabulate\n\n\ndef test_github():\n    out = tabulate([[1, 2]], tablefmt=\"github\")\n    assert out == \"| 1 | 2 |\"\n"
	return map[string]string{"tabulate/__init__.py": b.String(), "test/test_output.py": test, "pyproject.toml": "[project]\nname = \"tabulate\"\n"}
}

func TestContextTraceUseShowsTheTableEntryTheFunctionReads(t *testing.T) {
	src := formatsProject()
	mod := src["tabulate/__init__.py"]
	snap := files("pyproject.toml", src["pyproject.toml"], "tabulate/__init__.py", mod, "test/test_output.py", src["test/test_output.py"])
	rep := failing("test/test_output.py::test_github", "test/test_output.py", 6)
	rep.Tests[0].Message = "AssertionError: assert '|' == '| 1 | 2 |'"
	tab := lineOf(mod, "def tabulate(")
	trace := lang.Trace{"tabulate/__init__.py": {{From: tab, To: tab + 206, Count: 1}}}
	for i := 0; i < 40; i += 2 {
		l := lineOf(mod, fmt.Sprintf("def mid_%d(", i))
		trace["tabulate/__init__.py"] = append(trace["tabulate/__init__.py"], lang.Span{From: l, To: l + 9, Count: 1})
	}
	prompt := tracedPrompt(snap, rep, trace)
	if !shown(prompt, "tabulate/__init__.py", "    fmt = _table_formats.get(tablefmt)") {
		t.Fatalf("the traced prompt lacks tabulate(), which ran:\n%s", sections(prompt))
	}
	if !shown(prompt, "tabulate/__init__.py", githubEntry) {
		t.Errorf("the traced prompt lacks the table's github entry:\n%s", sections(prompt))
	}
}

// TestContextTraceUseEntriesNamedByFewLines: a name the failing test uses
// that is on every entry of the table (padding, which each format sets)
// tells no entry apart, so it does not spend the entries'
// room on the table's first ones: the entry shown is the one only the
// test's "github" names.
func TestContextTraceUseEntriesNamedByFewLines(t *testing.T) {
	src := formatsProject()
	mod := src["tabulate/__init__.py"]
	test := "from tabulate import tabulate\n\n\ndef test_github():\n    padding = 1\n    out = tabulate([[1, 2]], tablefmt=\"github\")\n    assert out == \"|\" + \" \" * padding + \"1 | 2 |\"\n"
	snap := files("pyproject.toml", src["pyproject.toml"], "tabulate/__init__.py", mod, "test/test_output.py", test)
	rep := failing("test/test_output.py::test_github", "test/test_output.py", 7)
	rep.Tests[0].Message = "AssertionError: assert '|' == '| 1 | 2 |'"
	tab := lineOf(mod, "def tabulate(")
	trace := lang.Trace{"tabulate/__init__.py": {{From: tab, To: tab + 206, Count: 1}}}
	for i := 0; i < 40; i += 2 {
		l := lineOf(mod, fmt.Sprintf("def mid_%d(", i))
		trace["tabulate/__init__.py"] = append(trace["tabulate/__init__.py"], lang.Span{From: l, To: l + 9, Count: 1})
	}
	prompt := tracedPrompt(snap, rep, trace)
	if !shown(prompt, "tabulate/__init__.py", githubEntry) {
		t.Errorf("the traced prompt lacks the table's github entry:\n%s", sections(prompt))
	}
	if shown(prompt, "tabulate/__init__.py", "    \"fmt000\": TableFormat(") {
		t.Errorf("the traced prompt shows the table's first entry, which only a name on every entry points at:\n%s", sections(prompt))
	}
}

// TestContextTraceUseWeighsSharedNamesDown: a name the traced method uses
// that forty declarations hold (frameSize, the type of a field of each
// dialer option) points at none of them; the field only Conn declares
// does. So the options take none of the first pass's room.
func TestContextTraceUseWeighsSharedNamesDown(t *testing.T) {
	src := connProject()
	mod := src["ws/conn.go"]
	for i := range 40 {
		mod = strings.Replace(mod, fmt.Sprintf("\tsize%02d int\n", i), fmt.Sprintf("\tsize%02d frameSize\n", i), 1)
	}
	mod = strings.Replace(mod, "// Frames reads frames.\n", "// frameSize is a frame's length.\ntype frameSize int\n\n// Frames reads frames.\n", 1)
	mod = strings.Replace(mod, "\tn := len(c.buf)\n", "\tn := int(frameSize(len(c.buf)))\n", 1)
	if strings.Count(mod, "frameSize") != 43 {
		t.Fatalf("the fixture did not take the change: %d frameSize", strings.Count(mod, "frameSize"))
	}
	snap := files("go.mod", src["go.mod"], "ws/conn.go", mod, "ws/frame.go", src["ws/frame.go"], "ws/conn_test.go", src["ws/conn_test.go"])
	rep := failing("example.com/ws.TestReadLimit", "ws/conn_test.go", 7)
	rep.Tests[0].Message = "read 4, want 3"
	prompt := tracedPrompt(snap, rep, connTrace(mod, src["ws/frame.go"]))
	if !shown(prompt, "ws/conn.go", "\tn := int(frameSize(len(c.buf)))") {
		t.Fatalf("the traced prompt lacks Conn.Next, which ran:\n%s", sections(prompt))
	}
	if !shown(prompt, "ws/conn.go", "type Conn struct {\n\tbuf []byte\n"+connField) {
		t.Errorf("the traced prompt lacks the Conn struct whose own field the traced method reads:\n%s", sections(prompt))
	}
	// opt00 may come with the file's head (left to the last pass, which
	// fills what room is left); no other option may take a place.
	for i := 1; i < 40; i++ {
		if o := fmt.Sprintf("type opt%02d struct {", i); shown(prompt, "ws/conn.go", o) {
			t.Errorf("the prompt shows %q, which only a name forty declarations hold points at", o)
		}
	}
}
