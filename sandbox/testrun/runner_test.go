package testrun

import (
	"reflect"
	"testing"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "  go   test  ./... ", want: []string{"go", "test", "./..."}},
		{in: `pytest -k 'a and not b' tests`, want: []string{"pytest", "-k", "a and not b", "tests"}},
		{in: `echo "a \"quoted\" \$HOME" x`, want: []string{"echo", `a "quoted" $HOME`, "x"}},
		{in: `a\ b c`, want: []string{"a b", "c"}},
		{in: `x'' ""`, want: []string{"x", ""}},
		{in: `it's`, wantErr: true},
		{in: `"open`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("SplitWords(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRunnerWithEnv(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		add  map[string]string
		want []string
	}{
		{name: "nothing configured", env: []string{"PYTHONDONTWRITEBYTECODE=1"}, want: []string{"PYTHONDONTWRITEBYTECODE=1"}},
		{name: "added in key order", add: map[string]string{"TZ": "UTC", "CI": "true"}, want: []string{"CI=true", "TZ=UTC"}},
		{name: "configured wins", env: []string{"PYTHONDONTWRITEBYTECODE=1", "X=1"}, add: map[string]string{"PYTHONDONTWRITEBYTECODE": ""}, want: []string{"X=1", "PYTHONDONTWRITEBYTECODE="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Runner{Name: RunnerCustom, Formats: testFormats(), Env: tt.env}
			got := r.WithEnv(tt.add)
			if !reflect.DeepEqual(got.Env, tt.want) && !(len(got.Env) == 0 && len(tt.want) == 0) {
				t.Errorf("WithEnv(%v) on %q = %q, want %q", tt.add, tt.env, got.Env, tt.want)
			}
			if len(tt.env) > 0 && &r.Env[0] == &got.Env[0] {
				t.Error("WithEnv changed the receiver's slice")
			}
		})
	}
}
