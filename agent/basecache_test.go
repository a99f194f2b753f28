package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func cacheSnap() *sandbox.Snapshot {
	return &sandbox.Snapshot{Files: map[string]sandbox.File{
		"go.mod":           snapFile("module example.com/m\n\ngo 1.22\n"),
		"m.go":             snapFile("package m\n\nfunc F() int { return 1 }\n"),
		"m_test.go":        snapFile("package m\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {}\n"),
		"requirements.txt": snapFile(""),
	}}
}

// TestBaselineKeyInvalidation: every input a baseline report depends on
// changes the key; the same inputs give the same key.
func TestBaselineKeyInvalidation(t *testing.T) {
	cfg := testConfig(t)
	e := New(cfg, &Options{Backend: namedBackend{nil, "bwrap"}})
	snap := cacheSnap()
	key := e.baselineKeyOf(snap)
	if again := New(cfg, &Options{Backend: namedBackend{nil, "bwrap"}}).baselineKeyOf(cacheSnap()); again != key {
		t.Fatal("the same inputs gave another key")
	}
	withCfg := func(f func(c *config.Config)) *Engine {
		c := *cfg
		c.Test.Env = map[string]string{}
		for k, v := range cfg.Test.Env {
			c.Test.Env[k] = v
		}
		f(&c)
		return New(&c, &Options{Backend: namedBackend{nil, "bwrap"}})
	}
	overlaid, _ := snap.WithOverlays(map[string][]byte{"m.go": []byte("package m\n\nfunc F() int { return 3 }\n")})
	cases := map[string]string{
		"a changed file":       e.baselineKeyOf(snap.With(map[string][]byte{"m.go": []byte("package m\n\nfunc F() int { return 2 }\n")})),
		"an editor buffer":     e.baselineKeyOf(overlaid),
		"a new file":           e.baselineKeyOf(snap.With(map[string][]byte{"notes.txt": []byte("x")})),
		"a deleted file":       e.baselineKeyOf(snap.With(map[string][]byte{"m_test.go": nil})),
		"a dependency":         e.baselineKeyOf(snap.With(map[string][]byte{"go.mod": []byte("module example.com/m\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.0\n")})),
		"the test environment": withCfg(func(c *config.Config) { c.Test.Env["TZ"] = "UTC" }).baselineKeyOf(snap),
		"the test command":     withCfg(func(c *config.Config) { c.TestCmd = "go test ./..." }).baselineKeyOf(snap),
		"the timeout":          withCfg(func(c *config.Config) { c.Sandbox.Timeout = config.Duration(time.Minute) }).baselineKeyOf(snap),
		"the image":            withCfg(func(c *config.Config) { c.Sandbox.Image = "my/image" }).baselineKeyOf(snap),
		"the setup command":    withCfg(func(c *config.Config) { c.Sandbox.Setup = "make deps" }).baselineKeyOf(snap),
		"the backend":          New(cfg, &Options{Backend: namedBackend{nil, "docker"}}).baselineKeyOf(snap),
	}
	seen := map[string]string{}
	for what, k := range cases {
		if k == key {
			t.Errorf("%s does not change the key", what)
		}
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s give one key", what, other)
		}
		seen[k] = what
	}
}

// TestBaselineCacheEntries: a stored report loads back; a missing one is a
// miss; an entry changed in place, copied under another key, replaced by a
// symlink or signed with another secret is rejected and removed.
func TestBaselineCacheEntries(t *testing.T) {
	cfg := testConfig(t)
	e := New(cfg, &Options{Backend: namedBackend{nil, "bwrap"}})
	c := e.baselineCache(t.TempDir())
	rep := &testrun.Report{Runner: "go", ExitCode: 1, Passed: 2, Failed: 1, Tests: []testrun.Result{
		{ID: "m.TestA", Status: testrun.StatusPass}, {ID: "m.TestB", Status: testrun.StatusPass}, {ID: "m.TestC", Status: testrun.StatusFail, Message: "want 2"},
	}}
	keyA, keyB := strings.Repeat("a", 64), strings.Repeat("b", 64)
	if got, err := c.load(keyA); got != nil || err != nil {
		t.Fatalf("empty cache: %v, %v", got, err)
	}
	now := time.Date(2026, 11, 27, 1, 2, 3, 0, time.UTC)
	trace := lang.Trace{"calc/calc.go": {{From: 9, To: 11, Count: 1}}}
	if err := c.store(keyA, rep, trace, now); err != nil {
		t.Fatal(err)
	}
	cb, err := c.load(keyA)
	if err != nil || cb == nil || !cb.when.Equal(now) || cb.rep.Failed != 1 || len(cb.rep.Tests) != 3 || cb.rep.Tests[2].Message != "want 2" {
		t.Fatalf("load = %+v, %v", cb, err)
	}
	if fmt.Sprint(cb.trace) != fmt.Sprint(trace) {
		t.Errorf("the trace stored with the baseline loads as %v, want %v", cb.trace, trace)
	}
	if fi, err := os.Stat(c.secret); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret: %v %v", fi, err)
	}
	raw, err := os.ReadFile(c.path(keyA))
	if err != nil {
		t.Fatal(err)
	}
	rejected := func(what, key string) {
		t.Helper()
		got, err := c.load(key)
		if got != nil || !errors.Is(err, errBaselineRejected) {
			t.Errorf("%s: load = %v, %v; want rejected", what, got, err)
		}
		if _, err := os.Lstat(c.path(key)); !os.IsNotExist(err) {
			t.Errorf("%s: the rejected entry was kept", what)
		}
	}
	// A failing test turned into a pass: the report is not the one signed.
	var ent baselineEntry
	if err := json.Unmarshal(raw, &ent); err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(raw), `\"status\":\"fail\"`, `\"status\":\"pass\"`, 1)
	forged = strings.Replace(forged, `"status":"fail"`, `"status":"pass"`, 1)
	if forged == string(raw) {
		t.Fatalf("the test did not change the entry: %s", raw)
	}
	os.WriteFile(c.path(keyA), []byte(forged), 0o600)
	rejected("a changed report", keyA)
	// A trace pointed at another file: the signature covers the trace too.
	if !strings.Contains(string(raw), `"calc/calc.go"`) {
		t.Fatalf("the entry holds no trace: %s", raw)
	}
	os.WriteFile(c.path(keyA), []byte(strings.Replace(string(raw), `"calc/calc.go"`, `"calc/other.go"`, 1)), 0o600)
	rejected("a changed trace", keyA)
	// An honest entry of another state, copied under this key.
	if err := c.store(keyB, rep, nil, now); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(c.path(keyB))
	os.WriteFile(c.path(keyA), b, 0o600)
	rejected("an entry copied from another key", keyA)
	// The key field rewritten too: the signature covers it.
	os.WriteFile(c.path(keyA), []byte(strings.ReplaceAll(string(b), keyB, keyA)), 0o600)
	rejected("an entry whose key was rewritten", keyA)
	// A symlink to an honest entry.
	if err := os.Symlink(c.path(keyB), c.path(keyA)); err != nil {
		t.Fatal(err)
	}
	rejected("a symlink", keyA)
	// Signed under another secret (a forger who does not hold this one).
	other := baselineCache{dir: c.dir, secret: filepath.Join(t.TempDir(), "key")}
	if err := other.store(keyA, rep, nil, now); err != nil {
		t.Fatal(err)
	}
	rejected("another secret", keyA)
	// The honest entry still loads.
	if got, err := c.load(keyB); err != nil || got == nil || got.trace != nil {
		t.Errorf("honest entry: %v, %v", got, err)
	}
	// A secret of the wrong size is an error, not a new secret.
	os.WriteFile(c.secret, []byte("short"), 0o600)
	if _, err := c.load(keyB); err == nil {
		t.Error("a broken secret was accepted")
	}
}

// TestBaselineStorable: only finished runs whose results agree with the
// runner's output are cached.
func TestBaselineStorable(t *testing.T) {
	for _, c := range []struct {
		rep  *testrun.Report
		want bool
	}{
		{&testrun.Report{ExitCode: 1, Failed: 1}, true},
		{&testrun.Report{TimedOut: true}, false},
		{&testrun.Report{OOM: true}, false},
		{&testrun.Report{Mismatch: []string{"summary says 2 failed"}}, false},
		{nil, false},
	} {
		if got := storable(c.rep); got != c.want {
			t.Errorf("storable(%+v) = %v", c.rep, got)
		}
	}
}

// baselineKeyOf is baselineKey of snap's project, derived as a run does.
func (e *Engine) baselineKeyOf(snap *sandbox.Snapshot) string {
	return e.baselineKey(e.newProject(snap))
}

// TestHostToolsFingerprintEveryLanguage: a bwrap baseline is keyed on
// every registered language's host program (its VersionCommand's), so an
// upgrade of any of them (a new language's too) invalidates it.
func TestHostToolsFingerprintEveryLanguage(t *testing.T) {
	bin := t.TempDir()
	var want []string
	for _, l := range registry.All() {
		name := l.VersionCommand()[0]
		want = append(want, name)
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "runner-x"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	got := hostTools(testrun.Runner{Args: []string{"runner-x"}})
	for _, n := range append(want, "runner-x") {
		if !strings.HasPrefix(got[n], filepath.Join(bin, n)+" ") {
			t.Errorf("hostTools()[%q] = %q, want its path, size and mtime", n, got[n])
		}
	}
	before := got[want[0]]
	if err := os.WriteFile(filepath.Join(bin, want[0]), []byte("#!/bin/sh\n# upgraded\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if after := hostTools(testrun.Runner{})[want[0]]; after == before {
		t.Errorf("an upgraded %s kept its fingerprint %q", want[0], after)
	}
}

// TestBaselineKeyDockerHostToolchain: a docker baseline is keyed on the
// host toolchain docker runs in place of the image's (a copy of rustup's):
// another toolchain, or an update of the same one, invalidates it; a note
// without a copy does not count.
func TestBaselineKeyDockerHostToolchain(t *testing.T) {
	cfg := testConfig(t)
	e := New(cfg, &Options{Backend: namedBackend{nil, "docker"}})
	proj := e.newProject(cacheSnap())
	keyWith := func(tools ...sandbox.HostTool) string {
		proj.spec.HostTools = tools
		return e.baselineKey(proj)
	}
	none := keyWith()
	stable := keyWith(sandbox.HostTool{Dir: "/h/.rustup/toolchains/stable-x", Copy: true, Target: "/opt/fixpoint/rust-toolchain", Key: "stable-x 1.95.0"})
	updated := keyWith(sandbox.HostTool{Dir: "/h/.rustup/toolchains/stable-x", Copy: true, Target: "/opt/fixpoint/rust-toolchain", Key: "stable-x 1.96.0"})
	note := keyWith(sandbox.HostTool{Copy: true, Note: "not offered"})
	if none == stable || stable == updated {
		t.Errorf("keys: none %s, stable %s, updated %s; want three", none, stable, updated)
	}
	if note != none {
		t.Errorf("a note without a copy changed the key")
	}
}
