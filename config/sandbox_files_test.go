package config

import (
	"errors"
	"strings"
	"testing"
)

func TestSandboxFiles(t *testing.T) {
	tests := []struct {
		name    string
		toml    string
		want    SandboxFiles
		wantErr string // substring; "" = no error
	}{
		{
			name: "all fields",
			toml: "[sandbox]\ninclude = [\"dist/schema.json\"]\nexclude = [\"testdata/huge/\"]\ninclude_secrets = [\"test/fixtures/.env.example\"]\nmax_file_size = \"10m\"\nmax_workspace_size = \"1g\"\n",
			want: SandboxFiles{Include: []string{"dist/schema.json"}, Exclude: []string{"testdata/huge/"},
				IncludeSecrets: []string{"test/fixtures/.env.example"}, MaxFileSize: "10m", MaxWorkspaceSize: "1g"},
		},
		{name: "bad size names file and line", toml: "[sandbox]\nmemory = \"1g\"\nmax_file_size = \"lots\"\n", wantErr: ".fixpoint.toml:3: sandbox.max_file_size: bad size \"lots\""},
		{name: "zero size", toml: "[sandbox]\nmax_workspace_size = \"0\"\n", wantErr: ".fixpoint.toml:2: sandbox.max_workspace_size"},
		{name: "pattern climbing out", toml: "[sandbox]\n\nexclude = [\"../other\"]\n", wantErr: ".fixpoint.toml:3: sandbox.exclude: pattern \"../other\" climbs out"},
		{name: "empty pattern", toml: "[sandbox]\ninclude_secrets = [\"\"]\n", wantErr: ".fixpoint.toml:2: sandbox.include_secrets: pattern \"\" is empty"},
		{name: "wrong type", toml: "[sandbox]\ninclude = \"dist\"\n", wantErr: ".fixpoint.toml:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Defaults(func(string) string { return "" })
			err := c.MergeTOML(".fixpoint.toml", []byte(tt.toml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("MergeTOML(%q) = %v, want error containing %q", tt.toml, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("MergeTOML: %v", err)
			}
			got := c.Sandbox.SandboxFiles
			if strings.Join(got.Include, ",") != strings.Join(tt.want.Include, ",") || strings.Join(got.Exclude, ",") != strings.Join(tt.want.Exclude, ",") ||
				strings.Join(got.IncludeSecrets, ",") != strings.Join(tt.want.IncludeSecrets, ",") || got.MaxFileSize != tt.want.MaxFileSize || got.MaxWorkspaceSize != tt.want.MaxWorkspaceSize {
				t.Errorf("SandboxFiles = %+v, want %+v", got, tt.want)
			}
			if f, tot := got.Sizes(); f != 10<<20 || tot != 1<<30 {
				t.Errorf("Sizes() = %d, %d, want %d, %d", f, tot, 10<<20, 1<<30)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
