package policy

import (
	"strings"
	"testing"
)

func TestIntroduced(t *testing.T) {
	before := []byte("import os\nimport socket\n\ndef f():\n    return 1\n")
	after := []byte("import os\nimport socket\n\n\ndef f():\n    return 2\n")
	old := Findings{{Rule: "python.network", Path: "m.py", Line: 2, Action: Block}}
	moved := Findings{{Rule: "python.network", Path: "m.py", Line: 2, Action: Block}}
	if got := Introduced(before, after, old, moved); len(got) != 0 {
		t.Errorf("an edit elsewhere in a file with an existing finding: Introduced = %v, want none", got)
	}
	// A second socket import is new; the first is still the user's.
	after2 := []byte("import os\nimport socket\nimport socket\n")
	two := Findings{{Rule: "python.network", Line: 2}, {Rule: "python.network", Line: 3}}
	if got := Introduced(before, after2, old, two); len(got) != 1 {
		t.Errorf("a second copy: Introduced = %v, want one finding", got)
	}
	// The same rule on another line is new.
	after3 := []byte("import os\nimport socket\nsocket.create_connection(('x', 1))\n")
	other := Findings{{Rule: "python.network", Line: 2}, {Rule: "python.network", Line: 3}}
	if got := Introduced(before, after3, old, other); len(got) != 1 || got[0].Line != 3 {
		t.Errorf("another line: Introduced = %v, want line 3", got)
	}
	// An existing line moved elsewhere (next to other code) is new.
	beforeExit := []byte("def main():\n    os._exit(0)\n")
	afterExit := []byte("import os\nos._exit(0)\ndef main():\n    pass\n")
	oldExit := Findings{{Rule: "python.exit", Line: 2}}
	if got := Introduced(beforeExit, afterExit, oldExit, Findings{{Rule: "python.exit", Line: 2}}); len(got) != 1 {
		t.Errorf("a moved line: Introduced = %v, want it blocked again", got)
	}
	// golang/term's fix: the import above an existing one removed. The
	// line before changed, the line after did not: still the user's.
	beforeImp := []byte("package t\n\nimport (\n\t\"io\"\n\t\"syscall\"\n\t\"unsafe\"\n)\n")
	afterImp := []byte("package t\n\nimport (\n\t\"syscall\"\n\t\"unsafe\"\n)\n")
	if got := Introduced(beforeImp, afterImp, Findings{{Rule: "go.syscall", Line: 5}}, Findings{{Rule: "go.syscall", Line: 4}}); len(got) != 0 {
		t.Errorf("an existing import whose neighbour above was removed: Introduced = %v, want none", got)
	}
	// ... but a second copy of it is still new, once.
	afterTwo := []byte("package t\n\nimport (\n\t\"syscall\"\n\t\"unsafe\"\n)\n\nimport \"syscall\"\n")
	if got := Introduced(beforeImp, afterTwo, Findings{{Rule: "go.syscall", Line: 5}}, Findings{{Rule: "go.syscall", Line: 4}, {Rule: "go.syscall", Line: 8}}); len(got) != 1 {
		t.Errorf("a second import next to a kept one: Introduced = %v, want one", got)
	}
	// A new file: everything is new.
	if got := Introduced(nil, after, nil, moved); len(got) != 1 {
		t.Errorf("new file: Introduced = %v, want the finding", got)
	}
}

// issue 21 (itoa's maintainers' fix): a line holding an existing construct
// rewritten in place is the user's construct edited, not a new one; a
// rewrite that adds a second one, or one far from where it was, is new.
func TestIntroducedRewrittenInPlace(t *testing.T) {
	before := []byte("fn f() {\n    let x = 1;\n    wr.write_all(unsafe {\n        slice::from_raw_parts(p, n)\n    })\n}\n")
	after := []byte("fn f() {\n    let x = 1;\n    let mut len = n;\n    try!(wr.write_all(unsafe { slice::from_raw_parts(p, len) }));\n    Ok(len)\n}\n")
	old := Findings{{Rule: "rust.unsafe", Line: 3}}
	if got := Introduced(before, after, old, Findings{{Rule: "rust.unsafe", Line: 4}}); len(got) != 0 {
		t.Errorf("an unsafe block's line rewritten in place: Introduced = %v, want none", got)
	}
	two := []byte("fn f() {\n    let x = 1;\n    try!(wr.write_all(unsafe { a() }));\n    unsafe { b() };\n}\n")
	if got := Introduced(before, two, old, Findings{{Rule: "rust.unsafe", Line: 3}, {Rule: "rust.unsafe", Line: 4}}); len(got) != 1 {
		t.Errorf("the rewrite adds a second unsafe block: Introduced = %v, want one", got)
	}
	far := []byte("fn f() {\n    let x = 1;\n}\n" + strings.Repeat("\n// pad", 20) + "\nfn g() { unsafe { b() } }\n")
	if got := Introduced(before, far, old, Findings{{Rule: "rust.unsafe", Line: 25}}); len(got) != 1 {
		t.Errorf("a construct removed and another added far away: Introduced = %v, want it new", got)
	}
	kept := []byte("fn f() {\n    let x = 1;\n    wr.write_all(unsafe {\n        slice::from_raw_parts(p, n)\n    })\n}\nfn g() { unsafe { b() } }\n")
	if got := Introduced(before, kept, old, Findings{{Rule: "rust.unsafe", Line: 3}, {Rule: "rust.unsafe", Line: 7}}); len(got) != 1 || got[0].Line != 7 {
		t.Errorf("the old line kept and a new one added: Introduced = %v, want line 7", got)
	}
}
