package setup

import (
	"context"
	"errors"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// idProber is a Prober and ImageIDer whose images' IDs and answers the
// test sets; it counts the probes it runs.
type idProber struct {
	sandbox.Backend
	ids    map[string]string // image -> ID
	out    map[string]string // ID -> probe output
	fail   bool
	probes int
}

func (f *idProber) ImageID(_ context.Context, img string) (string, error) {
	if id, ok := f.ids[img]; ok {
		return id, nil
	}
	return "", errors.New("no such image")
}

func (f *idProber) Probe(_ context.Context, img string, _ []string) (string, error) {
	f.probes++
	if f.fail {
		return "", errors.New("probe failed")
	}
	return f.out[f.ids[img]], nil
}

// An image's probe is kept by its content: the same image and command are
// probed once; an image rebuilt under the same name (a new ID), another
// command or a failed probe are probed again; "-" keeps nothing.
func TestProbeKeptByImageContent(t *testing.T) {
	f := &idProber{ids: map[string]string{"img": "sha256:aaa"}, out: map[string]string{"sha256:aaa": "Python 3.11.2", "sha256:bbb": "Python 3.12.1"}}
	p := New(nil, &Options{ProbeDir: t.TempDir()})
	ctx := t.Context()
	get := func(argv ...string) string {
		t.Helper()
		out, err := p.probe(ctx, f, "img", argv)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if a, b := get("python3", "--version"), get("python3", "--version"); a != "Python 3.11.2" || b != a || f.probes != 1 {
		t.Fatalf("outputs %q %q after %d probes: want one probe, the same answer", a, b, f.probes)
	}
	if get("python3", "-V"); f.probes != 2 {
		t.Errorf("another command: %d probes, want 2", f.probes)
	}
	f.ids["img"] = "sha256:bbb" // rebuilt
	if out := get("python3", "--version"); out != "Python 3.12.1" || f.probes != 3 {
		t.Errorf("rebuilt image: %q after %d probes, want the new answer from a new probe", out, f.probes)
	}
	f.fail = true
	f.ids["img"] = "sha256:ccc"
	if _, err := p.probe(ctx, f, "img", []string{"x"}); err == nil {
		t.Fatal("a failed probe returned no error")
	}
	f.fail = false
	f.out["sha256:ccc"] = "ok"
	if out := get("x"); out != "ok" || f.probes != 5 {
		t.Errorf("after a failed probe: %q after %d probes, want a new probe (failures are not kept)", out, f.probes)
	}
	off := New(nil, &Options{ProbeDir: "-"})
	before := f.probes
	off.probe(ctx, f, "img", []string{"x"})
	off.probe(ctx, f, "img", []string{"x"})
	if f.probes != before+2 {
		t.Errorf("ProbeDir \"-\": %d probes, want 2", f.probes-before)
	}
}
