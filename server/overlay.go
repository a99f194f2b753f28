package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
)

// document is one open editor buffer. Documents are immutable values:
// a change makes a new one, so a run can keep the one it started from.
type document struct {
	uri     string // exactly as the client sent it
	path    string // cleaned absolute file path; "" for non-file URIs
	version int32
	lang    string
	idx     *lineIndex
}

func (d *document) text() string { return d.idx.text }

// change is one textDocument/didChange content change. Full is true when
// the event had no "range" key (a whole-text replacement).
type change struct {
	Full  bool
	Range protocol.Range
	Text  string
}

// UnmarshalJSON decodes a TextDocumentContentChangeEvent, telling a
// full-text change from an insert at 0:0 by the presence of "range"
// (protocol's Range is not a pointer, so it cannot).
func (c *change) UnmarshalJSON(b []byte) error {
	var raw struct {
		Range *protocol.Range `json:"range"`
		Text  *string         `json:"text"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.Text == nil {
		return fmt.Errorf("content change without text")
	}
	c.Text, c.Full = *raw.Text, raw.Range == nil
	if raw.Range != nil {
		c.Range = *raw.Range
	}
	return nil
}

// apply returns the text after the changes, applied in order.
func applyChanges(text string, changes []change) string {
	for _, c := range changes {
		if c.Full {
			text = c.Text
			continue
		}
		idx := newLineIndex(text)
		start, end := idx.offset(c.Range.Start), idx.offset(c.Range.End)
		if end < start {
			start, end = end, start
		}
		var b strings.Builder
		b.Grow(len(text) - (end - start) + len(c.Text))
		b.WriteString(text[:start])
		b.WriteString(c.Text)
		b.WriteString(text[end:])
		text = b.String()
	}
	return text
}

// Limits of the document store. Documents inside a workspace folder are
// what runs overlay on the disk; documents elsewhere serve only code
// actions, so a client opening thousands of them (or a few huge ones)
// must not grow the server without bound: they live in a small LRU.
// Past the total cap a document is not kept at all, and a run reads that
// file from disk. Sizes count the text's bytes.
type storeLimits struct {
	outsideDocs  int   // documents outside every workspace folder
	outsideBytes int64 // their text, together
	totalBytes   int64 // every document's text
}

// defaultStoreLimits are the server's limits (tests use smaller ones).
func defaultStoreLimits() storeLimits {
	return storeLimits{outsideDocs: 64, outsideBytes: 16 << 20, totalBytes: 512 << 20}
}

// errStoreFull: a document was not kept because of the limits.
var errStoreFull = errors.New("document store full")

// overlays is the store of open documents, keyed by URI string.
// It is safe for concurrent use. Invariants (under mu): bytes is the sum
// of the texts of docs, outsideBytes and outsideDocs those of the entries
// with outside set, and none exceeds its limit.
type overlays struct {
	// inside reports whether a cleaned path lies in a workspace folder. It
	// is called without mu held; nil means every document is inside.
	inside func(path string) bool
	limits storeLimits

	mu           sync.RWMutex
	docs         map[string]*entry // guarded by mu
	bytes        int64             // guarded by mu
	outsideBytes int64             // guarded by mu
	outsideDocs  int               // guarded by mu
	clock        uint64            // guarded by mu; the last use stamp
}

// entry is a stored document and its bookkeeping.
type entry struct {
	doc     *document
	outside bool   // outside every workspace folder when last stored
	used    uint64 // overlays.clock at the last open or change
}

func newOverlays(inside func(path string) bool) *overlays {
	return &overlays{inside: inside, limits: defaultStoreLimits(), docs: map[string]*entry{}}
}

// isOutside reports whether a document at path is kept in the LRU of
// documents outside the workspace folders (non-file URIs are).
func (o *overlays) isOutside(path string) bool {
	return o.inside != nil && (path == "" || !o.inside(path))
}

func (o *overlays) open(uri, lang string, version int32, text string) (*document, error) {
	d := &document{uri: uri, path: uriPath(uri), version: version, lang: lang, idx: newLineIndex(text)}
	outside := o.isOutside(d.path)
	o.mu.Lock()
	defer o.mu.Unlock()
	return d, o.storeLocked(d, outside)
}

// storeLocked puts d in the store, evicting the least recently used
// documents outside the workspace folders to stay within the limits. When
// d does not fit, it is not stored (and an older version of it is gone).
func (o *overlays) storeLocked(d *document, outside bool) error {
	o.removeLocked(d.uri)
	size := int64(len(d.text()))
	if outside && size > o.limits.outsideBytes || size > o.limits.totalBytes {
		return fmt.Errorf("%w: %s (%d bytes) is not kept; fixpoint reads the file from disk", errStoreFull, d.uri, size)
	}
	o.clock++
	e := &entry{doc: d, outside: outside, used: o.clock}
	o.docs[d.uri] = e
	o.bytes += size
	if outside {
		o.outsideBytes += size
		o.outsideDocs++
	}
	for o.overLocked() {
		if !o.evictLocked(d.uri) {
			o.removeLocked(d.uri)
			return fmt.Errorf("%w: %s (%d bytes) is not kept; fixpoint reads the file from disk", errStoreFull, d.uri, size)
		}
	}
	return nil
}

func (o *overlays) overLocked() bool {
	l := o.limits
	return o.outsideDocs > l.outsideDocs || o.outsideBytes > l.outsideBytes || o.bytes > l.totalBytes
}

// evictLocked removes the least recently used outside document other than
// keep; false when there is none.
func (o *overlays) evictLocked(keep string) bool {
	var oldest *entry
	for uri, e := range o.docs {
		if e.outside && uri != keep && (oldest == nil || e.used < oldest.used) {
			oldest = e
		}
	}
	if oldest == nil {
		return false
	}
	o.removeLocked(oldest.doc.uri)
	return true
}

func (o *overlays) removeLocked(uri string) {
	e, ok := o.docs[uri]
	if !ok {
		return
	}
	size := int64(len(e.doc.text()))
	o.bytes -= size
	if e.outside {
		o.outsideBytes -= size
		o.outsideDocs--
	}
	delete(o.docs, uri)
}

// change applies changes to an open document. Changes to a document that
// is not open are an error (the client and server disagree, or the store
// let it go: see the limits above).
func (o *overlays) change(uri string, version int32, changes []change) (*document, error) {
	outside := o.isOutside(uriPath(uri))
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.docs[uri]
	if !ok {
		return nil, fmt.Errorf("didChange for %s, which is not open (or was let go by the document store)", uri)
	}
	nd := *e.doc
	nd.version = version
	for _, c := range changes {
		if c.Full {
			nd.idx = newLineIndex(c.Text)
		} else {
			nd.idx = nd.idx.replace(c.Range, c.Text)
		}
	}
	return &nd, o.storeLocked(&nd, outside)
}

func (o *overlays) close(uri string) {
	o.mu.Lock()
	o.removeLocked(uri)
	o.mu.Unlock()
}

func (o *overlays) get(uri string) *document {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if e := o.docs[uri]; e != nil {
		return e.doc
	}
	return nil
}

// size returns the number of stored documents and their bytes.
func (o *overlays) size() (docs int, bytes int64) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return len(o.docs), o.bytes
}

// byPath returns the open document for a cleaned absolute path, if any.
func (o *overlays) byPath(path string) *document {
	o.mu.RLock()
	defer o.mu.RUnlock()
	for _, e := range o.docs {
		if e.doc.path != "" && e.doc.path == path {
			return e.doc
		}
	}
	return nil
}

// under returns the open documents inside root, keyed by slash-separated
// path relative to root.
func (o *overlays) under(root string) map[string]*document {
	o.mu.RLock()
	defer o.mu.RUnlock()
	out := map[string]*document{}
	for _, e := range o.docs {
		if rel, ok := relPath(root, e.doc.path); ok {
			out[rel] = e.doc
		}
	}
	return out
}

// uriPath returns the cleaned file path of a file: URI, or "" for any
// other scheme (untitled:, git:, ...). It never panics, unlike
// uri.URI.Filename.
func uriPath(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return ""
	}
	p := u.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' { // file:///C:/x on Windows
		p = p[1:]
	}
	return filepath.Clean(filepath.FromSlash(p))
}

// fileURI returns the file: URI for an absolute path.
func fileURI(path string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return u.String()
}

// relPath returns path relative to root, slash-separated, when path is
// inside root.
func relPath(root, path string) (string, bool) {
	if root == "" || path == "" {
		return "", false
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
