package server

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestDocumentStoreBounded: thousands of didOpen of files outside every
// workspace folder keep at most the LRU's count and bytes; the documents
// in the folder, and the most recent outside ones, stay; a huge outside
// document is not kept at all.
func TestDocumentStoreBounded(t *testing.T) {
	e := newFakeEditor(t, editorOptions{files: map[string]string{"go.mod": "module w\n", "a.go": "package w\n"}})
	e.initialize(vscodeCaps)
	open := func(uri, text string) {
		e.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})
	}
	inside := e.uri("a.go")
	open(inside, "package w\n// TODO(fixpoint): make it faster\n")
	body := strings.Repeat("x", 10<<10)
	const n = 3000
	for i := range n {
		open(fmt.Sprintf("file:///elsewhere/f%d.go", i), body)
	}
	open("untitled:Untitled-1", body)
	open("file:///elsewhere/huge.go", strings.Repeat("y", 17<<20))
	// A request after the notifications: the server has handled them all.
	e.mustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": inside},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 1, "character": 0}}, "context": map[string]any{"diagnostics": []any{}}})

	l := defaultStoreLimits()
	docs, bytes := e.srv.docs.size()
	if docs > l.outsideDocs+1 || bytes > l.outsideBytes+int64(len("package w\n// TODO(fixpoint): make it faster\n")) {
		t.Errorf("after %d outside didOpen the store holds %d documents, %d bytes; want at most %d outside documents and %d bytes", n, docs, bytes, l.outsideDocs, l.outsideBytes)
	}
	if e.srv.docs.get(inside) == nil {
		t.Error("the workspace document was evicted")
	}
	if e.srv.docs.get("untitled:Untitled-1") == nil || e.srv.docs.get(fmt.Sprintf("file:///elsewhere/f%d.go", n-1)) == nil {
		t.Error("the most recently opened outside documents were evicted")
	}
	if e.srv.docs.get("file:///elsewhere/f0.go") != nil {
		t.Error("the least recently used outside document is still kept")
	}
	if e.srv.docs.get("file:///elsewhere/huge.go") != nil {
		t.Error("a document larger than the outside cap was kept")
	}
}

// TestOverlaysTotalCap: past the total cap the least recently used
// outside documents go first; a document that still does not fit is not
// kept, its older version neither, and the store's byte count stays exact.
func TestOverlaysTotalCap(t *testing.T) {
	o := newOverlays(func(p string) bool { return strings.HasPrefix(p, "/ws/") })
	o.limits = storeLimits{outsideDocs: 10, outsideBytes: 300, totalBytes: 1000}
	text := func(n int) string { return strings.Repeat("z", n) }
	mustOpen := func(uri string, n int) {
		t.Helper()
		if _, err := o.open(uri, "go", 1, text(n)); err != nil {
			t.Fatalf("open(%s, %d bytes) = %v", uri, n, err)
		}
	}
	mustOpen("file:///out/a", 100)
	mustOpen("file:///out/b", 100)
	mustOpen("file:///ws/1", 400)
	mustOpen("file:///ws/2", 400) // 1000 bytes in all
	mustOpen("file:///ws/3", 150) // evicts out/a and out/b
	if o.get("file:///out/a") != nil || o.get("file:///out/b") != nil {
		t.Error("outside documents were not evicted first")
	}
	if _, err := o.open("file:///ws/4", "go", 1, text(200)); !errors.Is(err, errStoreFull) {
		t.Errorf("open past the total cap = %v, want errStoreFull", err)
	}
	if o.get("file:///ws/4") != nil {
		t.Error("a document past the cap was kept")
	}
	// A change that grows a kept document past the cap lets it go.
	if _, err := o.change("file:///ws/3", 2, []change{{Full: true, Text: text(300)}}); !errors.Is(err, errStoreFull) {
		t.Errorf("change past the cap = %v, want errStoreFull", err)
	}
	if o.get("file:///ws/3") != nil {
		t.Error("the stale version of a document that no longer fits is still kept")
	}
	if docs, bytes := o.size(); docs != 2 || bytes != 800 {
		t.Errorf("size = %d documents, %d bytes; want 2, 800", docs, bytes)
	}
	o.close("file:///ws/1")
	if docs, bytes := o.size(); docs != 1 || bytes != 400 {
		t.Errorf("after close: size = %d, %d; want 1, 400", docs, bytes)
	}
}
