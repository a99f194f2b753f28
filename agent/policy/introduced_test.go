package policy

import "testing"

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
	// A new file: everything is new.
	if got := Introduced(nil, after, nil, moved); len(got) != 1 {
		t.Errorf("new file: Introduced = %v, want the finding", got)
	}
}
