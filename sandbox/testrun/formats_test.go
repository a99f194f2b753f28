package testrun

// testFormats are the formats testrun declares, in the order the
// registry hands them to a configured command (lang/registry.Formats:
// Go, then node's, then Python's), for tests that sniff.
func testFormats() []*Format {
	return []*Format{GoTestJSON("", nil), Jest, Mocha, TAP, Pytest, Unittest}
}

// formatNamed is the format testrun declares under a runner name, for
// tables that name runners.
func formatNamed(name string) *Format {
	for _, f := range append(testFormats(), Vitest, NPM("")) {
		if f.Name == name {
			return f
		}
	}
	return nil
}
