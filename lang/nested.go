package lang

import "github.com/fixpoint-dev/fixpoint/sandbox"

// Nested is implemented by a language whose project may sit in a
// sub-directory of the repository (a Go module in v5/ with no go.mod at
// the root). registry.Detect asks it only when no language claims the
// root, so a root manifest of another language always wins.
type Nested interface {
	DetectNested(snap *sandbox.Snapshot) bool
}
