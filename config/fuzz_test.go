package config

import (
	"errors"
	"testing"
)

// FuzzMergeTOML: any input either merges or fails with ErrInvalid naming
// the file; it never panics, and a merged config still validates or fails
// cleanly.
func FuzzMergeTOML(f *testing.F) {
	for _, s := range []string{
		"",
		"[model]\nname = \"x\"\nbase_url = \"http://localhost:11434/v1\"\n",
		"[agent]\nmax_iterations = 3\nwall_budget = \"2m\"\n",
		"[sandbox]\nbackend = \"docker\"\nmemory = \"512m\"\ntimeout = \"30s\"\n",
		"[policy.rules]\n\"python.subprocess\" = \"warn\"\n",
		"[memory]\nk = 5\nthreshold = 0.4\n",
		"test_cmd = \"pytest -q\"\n[agent\n",
		"data_dir = 3\n",
		"[[model]]\n",
		"a.b.c = 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Defaults(func(string) string { return "" })
		err := c.MergeTOML("fuzz.toml", data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("MergeTOML error %v is not ErrInvalid", err)
			}
			return
		}
		if err := c.Validate(); err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("Validate error %v is not ErrInvalid", err)
		}
	})
}
