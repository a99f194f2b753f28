package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/lang"
)

func TestApprover(t *testing.T) {
	deps := agent.Approval{Deps: []string{"npm:left-pad"}}
	setup := agent.Approval{Setup: []lang.SetupChange{{File: "package.json", What: `sets the postinstall script, which the install step runs: "node x.js"`}}}
	tests := []struct {
		name                  string
		allowDeps, allowSetup bool
		ap                    agent.Approval
		ok                    bool
		stderr                []string
	}{
		{name: "--allow-deps approves dependencies", allowDeps: true, ap: deps, ok: true, stderr: []string{"approved by flag: new dependencies: npm:left-pad"}},
		{name: "no terminal refuses dependencies", ap: deps, stderr: []string{"refused the model's edit", "npm:left-pad", "--allow-deps"}},
		{name: "--allow-deps does not approve a setup change", allowDeps: true, ap: setup,
			stderr: []string{"refused the model's edit", "package.json: sets the postinstall script", "with network", "--allow-setup-changes"}},
		{name: "--allow-setup-changes approves a setup change", allowSetup: true, ap: setup, ok: true, stderr: []string{"approved by flag: package.json: sets the postinstall script"}},
		{name: "--allow-setup-changes alone does not approve dependencies", allowSetup: true, ap: agent.Approval{Deps: deps.Deps, Setup: setup.Setup},
			stderr: []string{"refused", "--allow-deps"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errb bytes.Buffer
			a := &app{stdin: strings.NewReader("y\n"), stderr: &errb} // not a terminal: never read
			ok, err := a.approver(tt.allowDeps, tt.allowSetup)(t.Context(), tt.ap)
			if err != nil || ok != tt.ok {
				t.Fatalf("approver = %v, %v, want %v (stderr %q)", ok, err, tt.ok, errb.String())
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errb.String(), s) {
					t.Errorf("stderr %q lacks %q", errb.String(), s)
				}
			}
		})
	}
}

func TestAskYesNo(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{{"y\n", true}, {"YES\n", true}, {"n\n", false}, {"\n", false}, {"", false}}
	for _, tt := range tests {
		var w bytes.Buffer
		got, err := askYesNo(context.Background(), strings.NewReader(tt.in), &w, "Allow? ")
		if err != nil || got != tt.want || w.String() != "Allow? " {
			t.Errorf("askYesNo(%q) = %v, %v (prompt %q), want %v", tt.in, got, err, w.String(), tt.want)
		}
	}
}
