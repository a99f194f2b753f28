package rust

import (
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func TestSelectTestsRust(t *testing.T) {
	full := Runner()
	tests := []testrun.Result{
		{ID: "src/lib.rs::tests::adds", Name: "tests::adds", Package: "src/lib.rs", Status: testrun.StatusFail},
		{ID: "tests/it.rs::it_works $(touch x)", Name: "it_works $(touch x)", Package: "tests/it.rs", Status: testrun.StatusFail},
	}
	got, ok := Language{}.SelectTests(full, tests)
	if !ok {
		t.Fatal("not narrowed")
	}
	if len(got.Args) != 6 || got.Args[0] != "sh" || got.Args[1] != "-c" || got.Args[3] != "sh" ||
		!slices.Equal(got.Args[4:], []string{"tests::adds", "it_works $(touch x)"}) {
		t.Fatalf("args = %q", got.Args)
	}
	if !strings.Contains(got.Args[2], `cargo test --offline --no-fail-fast -- --exact "$@"`) || strings.Contains(got.Args[2], "it_works") {
		t.Errorf("script = %q: the names must reach cargo as parameters, not script text", got.Args[2])
	}
	if !strings.HasPrefix(got.Args[2], strings.TrimSuffix(full.Args[2], "exec cargo test --offline --no-fail-fast 2>&1")) || got.Format == nil || !slices.Equal(got.Env, full.Env) {
		t.Errorf("the narrowed runner lost the seeding, format or env: %+v", got)
	}
	for _, bad := range []testrun.Result{
		{ID: "mycrate (build)", Name: "build failed", Package: "mycrate", Status: testrun.StatusError},
		{ID: "tests/it.rs", Name: "tests/it.rs", Package: "tests/it.rs", Status: testrun.StatusError},
		{ID: "x::--nocapture", Name: "--nocapture", Package: "x"},
	} {
		if got, ok := (Language{}).SelectTests(full, []testrun.Result{bad}); ok {
			t.Errorf("%s: narrowed to %q", bad.ID, got.Args)
		}
	}
	custom := testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"cargo", "test"}}
	if _, ok := (Language{}).SelectTests(custom, tests); ok {
		t.Error("a custom command was narrowed")
	}
}
