package policy

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
)

// A Checker without IsTest treats no file as a test file: the rules for
// non-test code still fire (held-out mutation audit: a nil IsTest read as
// "every file is a test" turned them off).
func TestNilIsTestMeansNoTestFiles(t *testing.T) {
	c, err := New(config.Policy{}, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := c.Check(t.Context(), "calc.js", []byte("const assert = require('assert');\nassert.strictEqual = () => {};\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Rule == "js.assert-tamper" {
			return
		}
	}
	t.Errorf("Check = %v, want js.assert-tamper (a non-test-only rule) with a nil IsTest", fs)
}
