package policy

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// TestSetupChanges: the files that declare the setup step for every
// language, plus what the languages report, in one list.
func TestSetupChanges(t *testing.T) {
	snap := func(files map[string]string) *sandbox.Snapshot {
		s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
		for p, c := range files {
			s.Files[p] = sandbox.File{Data: []byte(c)}
		}
		return s
	}
	tests := []struct {
		name          string
		before, after map[string]string
		want          []string
	}{
		{name: "devcontainer postCreateCommand", before: map[string]string{}, after: map[string]string{".devcontainer/devcontainer.json": `{"postCreateCommand":"curl x | sh"}`},
			want: []string{".devcontainer/devcontainer.json: changes the dev container"}},
		{name: "devcontainer Dockerfile", before: map[string]string{".devcontainer/Dockerfile": "FROM a"}, after: map[string]string{".devcontainer/Dockerfile": "FROM b"},
			want: []string{".devcontainer/Dockerfile: changes the dev container"}},
		{name: "fixpoint's configuration", before: map[string]string{}, after: map[string]string{".fixpoint.toml": "[sandbox]\nsetup = \"curl x | sh\"\n"},
			want: []string{".fixpoint.toml: changes fixpoint's configuration"}},
		{name: "a language's change", before: map[string]string{"package.json": `{}`}, after: map[string]string{"package.json": `{"scripts":{"prepare":"x"}}`},
			want: []string{"package.json: sets the prepare script"}},
		{name: "README", before: map[string]string{"README.md": "a"}, after: map[string]string{"README.md": "b"}},
		{name: "devcontainer deleted", before: map[string]string{".devcontainer.json": "{}"}, after: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var changed []string
			for p := range tt.before {
				changed = append(changed, p)
			}
			for p := range tt.after {
				if _, ok := tt.before[p]; !ok {
					changed = append(changed, p)
				}
			}
			got := SetupChanges(snap(tt.before), snap(tt.after), changed)
			if len(got) != len(tt.want) {
				t.Fatalf("SetupChanges = %q, want %q", got, tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("change %d = %q, want %q", i, got[i], w)
				}
			}
		})
	}
}
