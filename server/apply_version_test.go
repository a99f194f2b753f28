package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
)

// TestOpenBufferEditCarriesItsVersion: an edit to an open buffer names the
// buffer's version at the time it was planned, so an editor whose buffer
// has moved on since (the user typed) refuses it instead of applying it
// over the new text; a file that is not open is edited with no version
// (the disk is the truth).
func TestOpenBufferEditCarriesItsVersion(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "disk.go"), []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{docs: newOverlays(func(string) bool { return true })}
	uri := fileURI(filepath.Join(root, "open.go"))
	if _, err := s.docs.open(uri, "go", 3, "package p\n\nvar x = 1\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.docs.change(uri, 9, []change{{Full: true, Text: "package p\n\nvar x = 2\n"}}); err != nil {
		t.Fatal(err)
	}
	changes := []agent.FileChange{
		{Path: "open.go", Before: []byte("package p\n\nvar x = 2\n"), After: []byte("package p\n\nvar x = 3\n")},
		{Path: "disk.go", Before: []byte("package p\n"), After: []byte("package p\n\nvar y = 1\n")},
	}
	plan, conflicts := planEdits(changes, s.stateFunc(root), false)
	if len(conflicts) != 0 || len(plan) != 2 {
		t.Fatalf("plan = %d edits, conflicts %v", len(plan), conflicts)
	}
	we, err := buildWorkspaceEdit(plan, clientCaps{documentChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]*int32{}
	for _, dc := range we.DocumentChanges {
		if te, ok := dc.(textDocumentEdit); ok {
			versions[te.TextDocument.URI] = te.TextDocument.Version
		}
	}
	if v, ok := versions[uri]; !ok || v == nil || *v != 9 {
		t.Errorf("the open buffer's edit has version %v (present %v); want 9, the buffer's version when planned", v, ok)
	}
	disk := fileURI(filepath.Join(root, "disk.go"))
	if v, ok := versions[disk]; !ok || v != nil {
		t.Errorf("the closed file's edit: present %v, version %v; want present with no version", ok, v)
	}
}
