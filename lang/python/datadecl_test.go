package python

import "testing"

func TestDataDecl(t *testing.T) {
	for line, want := range map[string]bool{
		"_table_formats = {":                     true,
		"LATEX_ESCAPE_RULES: dict[str, str] = {": true,
		"class TableFormat:":                     true,
		"    class Inner(Base):":                 true,
		"def tabulate(rows):":                    false,
		"    x = 1":                              false, // a local
		"if x == 1:":                             false,
	} {
		if got := (Language{}).DataDecl("tabulate/__init__.py", line); got != want {
			t.Errorf("DataDecl(%q) = %v, want %v", line, got, want)
		}
	}
	if (Language{}).DataDecl("x.go", "_table_formats = {") {
		t.Errorf("DataDecl judged a file that is not Python")
	}
}
