package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestApprover(t *testing.T) {
	var errb bytes.Buffer
	a := &app{stdin: strings.NewReader("y\n"), stderr: &errb}
	ok, err := a.approver(true)(t.Context(), []string{"npm:left-pad"})
	if err != nil || !ok || !strings.Contains(errb.String(), "approved npm:left-pad") {
		t.Errorf("--allow-deps: ok=%v err=%v stderr=%q, want approved", ok, err, errb.String())
	}
	errb.Reset()
	ok, err = a.approver(false)(t.Context(), []string{"python:requests"})
	if err != nil || ok || !strings.Contains(errb.String(), "refused new dependencies python:requests") {
		t.Errorf("no terminal: ok=%v err=%v stderr=%q, want refused with a hint", ok, err, errb.String())
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
