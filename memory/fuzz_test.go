package memory

import (
	"strings"
	"testing"
)

// FuzzSignature: the normaliser never panics, is deterministic, stays
// bounded, and does not depend on line numbers or absolute paths.
func FuzzSignature(f *testing.F) {
	seeds := []struct{ lang, raw string }{
		{"go", "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: Parse(\"1h\") = 0, want 3600\n"},
		{"go", "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:\nexample.com/x.Parse(...)\n\t/tmp/x/parse.go:10 +0x1d\n"},
		{"python", "Traceback (most recent call last):\n  File \"/work/tests/test_a.py\", line 3, in test_a\n    assert f(1) == 2\nAssertionError: assert 1 == 2\n"},
		{"node", "TypeError: Cannot read properties of undefined (reading 'x')\n    at parse (/app/src/parse.js:4:11)\n    at Object.<anonymous> (/app/test/parse.test.js:7:3)\n"},
		{"", "error at 0xc000123456 on 127.0.0.1:45678 after 1.5s at 2026-11-22T00:00:00Z"},
	}
	for _, s := range seeds {
		f.Add(s.lang, s.raw, 7)
	}
	f.Fuzz(func(t *testing.T, lang, raw string, shift int) {
		a := Signature(lang, raw)
		if b := Signature(lang, raw); a != b {
			t.Fatalf("Signature is not deterministic: %q vs %q", a, b)
		}
		if len(a) > 4096 {
			t.Fatalf("Signature length %d, want it bounded", len(a))
		}
		// Moving the error to other lines of another checkout must not change it.
		moved := strings.ReplaceAll(raw, "/tmp/x/", "/home/other/checkout/")
		if strings.Contains(raw, "/tmp/x/") && !strings.Contains(raw, "/home/other/checkout/") && Signature(lang, moved) != a {
			t.Fatalf("Signature depends on the absolute path: %q vs %q", a, Signature(lang, moved))
		}
	})
}
