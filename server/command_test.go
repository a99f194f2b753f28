package server

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCommandsDeclaredOnce: what initialize advertises, what
// executeCommand dispatches and the plugin names in messages all come from
// commands(); every plugin name it declares is a command the shipped
// Neovim plugin and Emacs recipe define.
func TestCommandsDeclaredOnce(t *testing.T) {
	e := newFakeEditor(t, editorOptions{engine: &fakeEngine{}, files: map[string]string{"go.mod": "module w\n"}})
	params := json.RawMessage(e.expand(`{"processId":1,"rootUri":"$ROOT","capabilities":{},"workspaceFolders":[{"uri":"$ROOT","name":"ws"}]}`))
	var init struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(e.mustCall("initialize", params), &init); err != nil {
		t.Fatal(err)
	}
	e.notify("initialized", map[string]any{})
	advertised := init.Capabilities.ExecuteCommandProvider.Commands
	if want := []string{cmdSolveGoal, cmdFixTests, cmdRunTests, cmdCancel, cmdListModels}; !slices.Equal(advertised, want) {
		t.Errorf("advertised commands = %v, want %v", advertised, want)
	}
	for _, c := range commands() {
		_, err := e.call("workspace/executeCommand", map[string]any{"command": c.id, "arguments": []any{"not an object"}})
		unknown := err != nil && strings.Contains(err.Error(), "unknown command")
		// A hidden command (a shipped plugin's own) is dispatched, never advertised.
		if dispatched := c.handle != nil; unknown == dispatched || slices.Contains(advertised, c.id) != (dispatched && !c.hidden) {
			t.Errorf("command %s: advertised %v, unknown to executeCommand %v; want dispatch to follow its handler (%v), advertising also its hidden flag (%v)",
				c.id, slices.Contains(advertised, c.id), unknown, dispatched, c.hidden)
		}
	}

	nvim, err := os.ReadFile("../editors/nvim/lua/fixpoint/init.lua")
	if err != nil {
		t.Fatal(err)
	}
	emacs, err := os.ReadFile("../editors/emacs/fixpoint.el")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands() {
		if name, ok := strings.CutPrefix(c.nvim, ":"); c.nvim != "" && (!ok || !strings.Contains(string(nvim), `cmd("`+name+`"`)) {
			t.Errorf("command %s names %s, which the Neovim plugin does not define", c.id, c.nvim)
		}
		if name, ok := strings.CutPrefix(c.emacs, "M-x "); c.emacs != "" && (!ok || !strings.Contains(string(emacs), "(defun "+name+" ")) {
			t.Errorf("command %s names %s, which the Emacs recipe does not define", c.id, c.emacs)
		}
	}
}
