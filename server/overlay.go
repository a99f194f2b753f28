package server

import (
	"encoding/json"
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

// overlays is the store of open documents, keyed by URI string.
// It is safe for concurrent use.
type overlays struct {
	mu   sync.RWMutex
	docs map[string]*document // guarded by mu
}

func newOverlays() *overlays { return &overlays{docs: map[string]*document{}} }

func (o *overlays) open(uri, lang string, version int32, text string) *document {
	d := &document{uri: uri, path: uriPath(uri), version: version, lang: lang, idx: newLineIndex(text)}
	o.mu.Lock()
	o.docs[uri] = d
	o.mu.Unlock()
	return d
}

// change applies changes to an open document. Changes to a document that
// is not open are an error (the client and server disagree).
func (o *overlays) change(uri string, version int32, changes []change) (*document, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	d, ok := o.docs[uri]
	if !ok {
		return nil, fmt.Errorf("didChange for %s, which is not open", uri)
	}
	nd := *d
	nd.version = version
	for _, c := range changes {
		if c.Full {
			nd.idx = newLineIndex(c.Text)
		} else {
			nd.idx = nd.idx.replace(c.Range, c.Text)
		}
	}
	o.docs[uri] = &nd
	return &nd, nil
}

func (o *overlays) close(uri string) {
	o.mu.Lock()
	delete(o.docs, uri)
	o.mu.Unlock()
}

func (o *overlays) get(uri string) *document {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.docs[uri]
}

// byPath returns the open document for a cleaned absolute path, if any.
func (o *overlays) byPath(path string) *document {
	o.mu.RLock()
	defer o.mu.RUnlock()
	for _, d := range o.docs {
		if d.path != "" && d.path == path {
			return d
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
	for _, d := range o.docs {
		if rel, ok := relPath(root, d.path); ok {
			out[rel] = d
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
