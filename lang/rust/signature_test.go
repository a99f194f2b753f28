package rust_test

import (
	"os"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/memory"
)

// The failure memory's signature of a cargo test run keeps what
// identifies the failure and drops what varies between two runs of it.
func TestMemorySignature(t *testing.T) {
	raw, err := os.ReadFile("testdata/libtest/mixed.merged")
	if err != nil {
		t.Fatal(err)
	}
	got := memory.Signature("", string(raw))
	for _, want := range []string{"lang: rust", "test: tests::does_not_panic", "panicked: sub(N, N) was N", "frames: lib.rs"} {
		if !strings.Contains(got, want) {
			t.Errorf("Signature lacks %q:\n%s", want, got)
		}
	}
	for _, leak := range []string{"0x", ":45", "/workspace", "1.63"} {
		if strings.Contains(got, leak) {
			t.Errorf("Signature keeps %q:\n%s", leak, got)
		}
	}
	// Another run of the same failure, with other numbers, has the same
	// signature.
	other := strings.NewReplacer("finished in 0.01s", "finished in 1.23s", "src/lib.rs:45:9", "src/lib.rs:47:9", "mixed-11fc13d974d29ad2", "mixed-0000000000000000").Replace(string(raw))
	if o := memory.Signature("rust", other); o != got {
		t.Errorf("Signature of the same failure differs:\n%s\n---\n%s", got, o)
	}
}
