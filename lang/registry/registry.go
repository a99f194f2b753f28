// Package registry declares the languages fixpoint knows, once. Adding a
// language is a new folder under lang/ plus one line in [All].
package registry

import (
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/golang"
	"github.com/fixpoint-dev/fixpoint/lang/node"
	"github.com/fixpoint-dev/fixpoint/lang/python"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// All returns every language, in detection order: a Go module with a
// package.json for tooling is a Go project, a Node project with helper
// scripts in Python is a Node project.
func All() []lang.Language {
	return []lang.Language{golang.Language{}, node.Language{}, python.Language{}}
}

// Detect returns the language of snap, or nil.
func Detect(snap *sandbox.Snapshot) lang.Language {
	for _, l := range All() {
		if l.Detect(snap) {
			return l
		}
	}
	return nil
}

// ByName returns the language called name, or nil.
func ByName(name string) lang.Language {
	for _, l := range All() {
		if l.Name() == name {
			return l
		}
	}
	return nil
}
