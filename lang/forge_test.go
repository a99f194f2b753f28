package lang

import "testing"

// TestForgeReportWritePaths: every way into another process's descriptors
// or fixpoint's report directory is a report-write finding on its line,
// and paths that merely look alike are not (held-out mutant
// policy-forge-devfd-forgotten: /dev/fd dropped from the rule).
func TestForgeReportWritePaths(t *testing.T) {
	hits := map[string]string{
		"proc self fd":        `open("/proc/self/fd/1", "w")`,
		"proc pid fd":         `open("/proc/1/fd/1", "w")`,
		"proc thread-self fd": `os.OpenFile("/proc/thread-self/fd/2", os.O_WRONLY, 0)`,
		"proc concatenated":   `fs.writeFileSync("/proc/" + process.ppid + "/fd/1", s)`,
		"proc self root":      `std::fs::write("/proc/self/root/tmp/x", b)`,
		"dev fd stdout":       `open("/dev/fd/1", "w").write(s)`,
		"dev fd stderr":       `fs.appendFileSync('/dev/fd/2', s)`,
		"dev fd alone":        `os.listdir("/dev/fd")`,
		"report directory":    `os.WriteFile(".fixpoint/junit.xml", b, 0o644)`,
	}
	for name, line := range hits {
		src := []byte("x = 1\n" + line + "\n")
		var got []PolicyFinding
		for _, f := range ForgeFindings("py", src) {
			if f.Rule == "py.report-write" {
				got = append(got, f)
			}
		}
		if len(got) != 1 || got[0].Line != 2 {
			t.Errorf("%s: ForgeFindings(%q) report-write findings = %+v, want one on line 2", name, line, got)
		}
	}
	for _, line := range []string{
		`open("/dev/null", "w")`,
		`open("/proc/cpuinfo").read()`,
		`open("/dev/fd0", "rb")`, // the floppy drive, not a descriptor
		`os.ReadFile("fixpoint.toml")`,
	} {
		if got := ForgeFindings("py", []byte(line+"\n")); len(got) != 0 {
			t.Errorf("ForgeFindings(%q) = %+v, want none", line, got)
		}
	}
}
