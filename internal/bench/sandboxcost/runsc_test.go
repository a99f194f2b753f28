package sandboxcost

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func TestVariantRuntime(t *testing.T) {
	tests := []struct {
		mode   string
		want   string
		wantOK bool
	}{
		{mode: "fixpoint-runsc-ptrace", want: "runsc-ptrace", wantOK: true},
		{mode: "fixpoint-runsc-overlay-none", want: "runsc-overlay-none", wantOK: true},
		{mode: ModeFixpointRunsc}, // measured by its own runner
		{mode: ModeFixpoint},
		{mode: ModeBare},
		{mode: "fixpoint-runscx"},
		{mode: "runsc-ptrace"},
	}
	for _, tt := range tests {
		got, ok := variantRuntime(tt.mode)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("variantRuntime(%q) = %q, %v, want %q, %v", tt.mode, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestParseProbe(t *testing.T) {
	tests := []struct {
		out                  string
		spawn, syscall, stat time.Duration
		wantErr              bool
	}{
		{out: "7400000 10270 4100\n", spawn: 7400 * time.Microsecond, syscall: 10270 * time.Nanosecond, stat: 4100 * time.Nanosecond},
		{out: "1930000 -12 900\n", spawn: 1930 * time.Microsecond, stat: 900 * time.Nanosecond}, // noise below the empty loop
		{out: "7400000 10270\n", wantErr: true},
		{out: "Traceback", wantErr: true},
		{out: "", wantErr: true},
	}
	for _, tt := range tests {
		spawn, sc, st, err := parseProbe(tt.out)
		if (err != nil) != tt.wantErr || spawn != tt.spawn || sc != tt.syscall || st != tt.stat {
			t.Errorf("parseProbe(%q) = %v, %v, %v, %v, want %v, %v, %v, error %v", tt.out, spawn, sc, st, err, tt.spawn, tt.syscall, tt.stat, tt.wantErr)
		}
	}
}

func TestFloorMarkdown(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	tab := &FloorTable{Image: "fixpoint-sandbox-python", Runs: 30, Rows: []FloorRow{
		{Runtime: ModeBare, Warm: ms(1.4), Spawn: ms(1.9), Syscall: 190 * time.Nanosecond, Stat: 2170 * time.Nanosecond},
		{Runtime: "runc", SessionStart: ms(310), Warm: ms(2.7), InSandbox: ms(1.2), Spawn: ms(7.3), Syscall: 1240 * time.Nanosecond, Stat: 3 * time.Microsecond},
		{Runtime: "runsc", SessionStart: ms(1285), Warm: ms(36.2), InSandbox: ms(23.2), Spawn: ms(7.4), Syscall: 10270 * time.Nanosecond, Stat: 20680 * time.Nanosecond},
		{Runtime: "runsc-kvm", Skipped: "docker runtime \"runsc-kvm\" is not configured | elsewhere"},
	}}
	got := tab.Markdown()
	golden := filepath.Join("testdata", "floor.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run with -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("FloorTable.Markdown() =\n%s\nwant\n%s", got, want)
	}
}

// TestMeasureFloorSmoke measures the floor against the real engine with few
// runs and checks each row is filled or says why it was skipped.
func TestMeasureFloorSmoke(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
	tab, err := MeasureFloor(t.Context(), &Options{Client: cli, Iterations: 3})
	if err != nil {
		t.Fatalf("MeasureFloor: %v", err)
	}
	if len(tab.Rows) < 2 || tab.Rows[0].Runtime != ModeBare || tab.Rows[1].Runtime != "runc" {
		t.Fatalf("MeasureFloor rows = %+v, want bare then runc first", tab.Rows)
	}
	for _, r := range tab.Rows {
		switch {
		case r.Skipped != "":
			if r.Runtime == ModeBare || r.Runtime == "runc" {
				t.Errorf("floor %s skipped: %s", r.Runtime, r.Skipped)
			}
		case r.Warm <= 0 || r.Spawn <= 0 || r.Stat <= 0:
			t.Errorf("floor row %+v is incomplete", r)
		case r.Runtime != ModeBare && (r.SessionStart < r.Warm || r.InSandbox <= 0 || r.InSandbox > r.Warm):
			t.Errorf("floor row %+v: want fresh session > warm command >= its in-sandbox part > 0", r)
		}
	}
	t.Logf("\n%s", tab.Markdown())
}
