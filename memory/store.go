package memory

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	chromem "github.com/philippgille/chromem-go"
)

// ErrReadOnly is returned by writes when the memory directory cannot be
// written (read-only file system or permissions). Recall still works.
var ErrReadOnly = errors.New("memory is read-only")

// ErrNotFound is returned for an unknown or ambiguous record id.
var ErrNotFound = errors.New("no such memory record")

// DefaultCap is the default retention cap per project.
const DefaultCap = 5000

// Options configures Open. The zero value is valid except for Root.
type Options struct {
	// Root is the project root; ProjectID(Root) names the collection.
	// Required.
	Root string
	// Embedder builds vectors; nil means Local(). The store records its
	// Name and re-embeds every record from the journal when it changes.
	Embedder Embedder
	// Cap is the most records kept per project; 0 means DefaultCap. Beyond
	// it, the records with the fewest hits, then least recently updated,
	// are evicted.
	Cap int
	// Global also opens the cross-project collection: Recall searches it
	// too, and Resolve copies resolved lessons into it.
	Global bool
	// Logger receives warnings (corrupt entries, embedder changes); nil
	// discards them.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now. For tests.
	Now func() time.Time
}

// Store is a project's failure memory: a durable journal (the source of
// truth) loaded into an in-memory chromem-go collection for similarity
// search. See the package documentation for the on-disk guarantees.
//
// A Store is safe for concurrent use, and several processes may open the
// same project: writes are serialised by a file lock, and each Recall first
// loads what other processes appended.
type Store struct {
	project string
	root    string
	dir     string
	proj    *collection
	global  *collection // nil unless Options.Global
	cap     int
	log     *slog.Logger
	now     func() time.Time
}

// Open opens (creating if needed) the memory of the project at opts.Root
// under dataDir/memory/projects/<ProjectID>, and dataDir/memory/global when
// opts.Global is set.
//
// ctx bounds the loading: a journal written by another embedder is
// re-embedded, which for a network embedder means a request per record.
//
// Open fails when the directory can neither be created nor read; callers
// should then warn and run without memory. A read-only directory with an
// existing journal opens read-only (writes return ErrReadOnly). Corrupt
// journal entries are skipped, logged and listed by Stats; they never make
// Open fail.
func Open(ctx context.Context, dataDir string, opts *Options) (*Store, error) {
	if opts == nil || opts.Root == "" {
		return nil, errors.New("memory: Options.Root is required")
	}
	if dataDir == "" {
		return nil, errors.New("memory: data dir is empty")
	}
	s := &Store{
		project: ProjectID(opts.Root),
		root:    canonicalRoot(opts.Root),
		cap:     opts.Cap,
		log:     opts.Logger,
		now:     opts.Now,
	}
	if s.cap <= 0 {
		s.cap = DefaultCap
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	emb := opts.Embedder
	if emb == nil {
		emb = Local()
	}
	s.dir = filepath.Join(dataDir, "memory", "projects", s.project)
	var err error
	s.proj, err = openCollection(ctx, s.dir, emb, s.log)
	if err != nil {
		return nil, err
	}
	if s.proj.writable {
		m := readMeta(s.dir)
		if m.Root != s.root {
			m.Root, m.Remote = s.root, GitRemote(s.root)
			m.Embedder = emb.Name()
			_ = writeMeta(s.dir, m)
		}
	}
	if opts.Global {
		s.global, err = openCollection(ctx, filepath.Join(dataDir, "memory", "global"), emb, s.log)
		if err != nil {
			s.proj.close()
			return nil, err
		}
	}
	return s, nil
}

// ProjectID returns the store's project id.
func (s *Store) ProjectID() string { return s.project }

// Dir returns the project's memory directory.
func (s *Store) Dir() string { return s.dir }

// Add records a failure and returns its id. It fills ID, Project, Created,
// Updated, Outcome and Signature when empty and caps Excerpt at MaxExcerpt.
// The record is durable (fsynced) when Add returns nil. Beyond the cap, the
// least useful records are evicted.
func (s *Store) Add(ctx context.Context, r Record) (string, error) {
	if err := s.prepare(&r, s.now().UTC()); err != nil {
		return "", err
	}
	e, err := s.putEntry(ctx, s.proj, &r)
	if err != nil {
		return "", err
	}
	err = s.proj.withWriteLock(ctx, func() error {
		entries := []*entry{e}
		if victims := s.victimsBatchLocked([]string{r.ID}); len(victims) > 0 {
			entries = append(entries, &entry{Op: "del", IDs: victims})
		}
		if err := s.proj.appendLocked(ctx, entries); err != nil {
			return err
		}
		s.maybeCompact(ctx, s.proj)
		return nil
	})
	if err != nil {
		return "", err
	}
	return r.ID, nil
}

// putEntry builds the journal entry for r, with its vector when the
// embedder is remote (computed before taking any lock).
func (s *Store) putEntry(ctx context.Context, c *collection, r *Record) (*entry, error) {
	e := &entry{Op: "put", Rec: r}
	if _, local := c.emb.(localEmbedder); local {
		return e, nil
	}
	v, err := c.emb.Embed(ctx, []string{embedText(r)})
	if err != nil {
		return nil, fmt.Errorf("memory: embed record: %w", err)
	}
	e.Emb, e.Vec = c.emb.Name(), v[0]
	return e, nil
}

// victimsBatchLocked returns the ids to evict so that adding newIDs keeps
// the project at its cap: fewest hits first, then least recently updated,
// then lowest id. New records are never evicted by their own batch.
func (s *Store) victimsBatchLocked(newIDs []string) []string {
	c := s.proj
	isNew := make(map[string]bool, len(newIDs))
	n := len(c.recs)
	for _, id := range newIDs {
		if c.recs[id] == nil && !isNew[id] {
			n++
		}
		isNew[id] = true
	}
	if n <= s.cap {
		return nil
	}
	all := make([]*Record, 0, len(c.recs))
	for _, r := range c.recs {
		if !isNew[r.ID] {
			all = append(all, r)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Hits != b.Hits {
			return a.Hits < b.Hits
		}
		if !a.Updated.Equal(b.Updated) {
			return a.Updated.Before(b.Updated)
		}
		return a.ID < b.ID
	})
	k := min(n-s.cap, len(all))
	ids := make([]string, 0, k)
	for _, r := range all[:k] {
		ids = append(ids, r.ID)
	}
	return ids
}

// prepare fills r's defaults for Add.
func (s *Store) prepare(r *Record, now time.Time) error {
	if r.ID == "" {
		r.ID = newID()
	}
	r.Project = s.project
	if r.Created.IsZero() {
		r.Created = now
	}
	if r.Updated.IsZero() {
		r.Updated = r.Created
	}
	if r.Outcome == "" {
		r.Outcome = OutcomeOpen
	}
	r.Excerpt = capExcerpt(r.Excerpt)
	if r.Signature == "" {
		r.Signature = Signature(r.Language, r.Excerpt)
	}
	if strings.TrimSpace(embedText(r)) == "" {
		return errors.New("memory: record has neither signature nor excerpt")
	}
	return nil
}

// Recall returns up to opts.K records most similar to query, best first,
// with similarity at least opts.Threshold. It first loads records other
// processes appended.
//
// Records are embedded by their Signature, so the best query is the
// Signature of the new failure; raw output also works: every line of the
// query is normalised like a signature line (paths, numbers, addresses and
// durations stripped) before it is embedded.
func (s *Store) Recall(ctx context.Context, query string, opts RecallOptions) ([]Match, error) {
	if opts.K <= 0 {
		opts.K = 3
	}
	if strings.TrimSpace(query) == "" {
		return nil, nil
	}
	qv, err := s.proj.emb.Embed(ctx, []string{normalizeQuery(query)})
	if err != nil {
		return nil, fmt.Errorf("memory: embed query: %w", err)
	}
	matches, err := s.proj.query(ctx, qv[0], opts)
	if err != nil {
		return nil, err
	}
	if s.global != nil {
		g, err := s.global.query(ctx, qv[0], opts)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, m := range matches {
			seen[m.ID] = true
		}
		for _, m := range g {
			if !seen[m.ID] {
				m.Global = true
				matches = append(matches, m)
			}
		}
		sort.SliceStable(matches, func(i, j int) bool { return matches[i].Similarity > matches[j].Similarity })
		if len(matches) > opts.K {
			matches = matches[:opts.K]
		}
	}
	return matches, nil
}

// normalizeQuery applies the signature line normalisation to every line.
// It leaves a Signature unchanged.
func normalizeQuery(q string) string {
	lines := strings.Split(q, "\n")
	out := lines[:0]
	for _, l := range lines {
		if n := normLine(l); n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "\n")
}

func (c *collection) query(ctx context.Context, qv []float32, opts RecallOptions) ([]Match, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refreshLocked(ctx, false); err != nil {
		return nil, err
	}
	cols := c.cols
	if opts.Language != "" {
		cols = map[string]*chromem.Collection{opts.Language: c.cols[opts.Language]}
	}
	// The per-language collections are searched at once: chromem's scan
	// of one collection leaves the CPUs partly idle (it hands documents
	// over channels), so overlapping them lowers an all-language query's
	// wall time.
	var (
		res  []chromem.Result
		errs []error
		mu   sync.Mutex
		wg   sync.WaitGroup
	)
	for _, col := range cols {
		n := 0
		if col != nil {
			n = min(opts.K, col.Count()) // chromem errors when nResults > Count()
		}
		if n == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := col.QueryEmbedding(ctx, qv, n, nil, nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			res = append(res, r...)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("memory query: %w", err)
	}
	sort.SliceStable(res, func(i, j int) bool {
		if res[i].Similarity != res[j].Similarity {
			return res[i].Similarity > res[j].Similarity
		}
		return res[i].ID < res[j].ID
	})
	if len(res) > opts.K {
		res = res[:opts.K]
	}
	out := make([]Match, 0, len(res))
	for _, r := range res {
		if r.Similarity < opts.Threshold {
			continue
		}
		if rec := c.recs[r.ID]; rec != nil {
			out = append(out, Match{Record: *rec, Similarity: r.Similarity})
		}
	}
	return out, nil
}

// Resolve marks the records as resolved by a later green attempt, with the
// resolution diff and a short lesson. With Options.Global, the resolved
// records are also copied into the global collection. Unknown ids are
// ignored.
func (s *Store) Resolve(ctx context.Context, ids []string, resolutionDiff, lesson string) error {
	return s.update(ctx, ids, func(r *Record) {
		r.ResolutionDiff, r.Lesson, r.Outcome = resolutionDiff, lesson, OutcomeResolved
	}, true)
}

// Hit adds one hit to each record: a run that was shown it went green.
// Unknown ids are ignored.
func (s *Store) Hit(ctx context.Context, ids []string) error {
	return s.update(ctx, ids, func(r *Record) { r.Hits++ }, false)
}

func (s *Store) update(ctx context.Context, ids []string, fn func(*Record), toGlobal bool) error {
	if len(ids) == 0 {
		return nil
	}
	for _, c := range []*collection{s.proj, s.global} {
		if c == nil {
			continue
		}
		copyTo := c == s.global && toGlobal
		if err := s.updateIn(ctx, c, ids, fn, copyTo); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) updateIn(ctx context.Context, c *collection, ids []string, fn func(*Record), copyFromProject bool) error {
	return c.withWriteLock(ctx, func() error {
		return s.updateLocked(ctx, c, ids, fn, copyFromProject)
	})
}

func (s *Store) updateLocked(ctx context.Context, c *collection, ids []string, fn func(*Record), copyFromProject bool) error {
	var entries []*entry
	for _, id := range ids {
		var r Record
		if old := c.recs[id]; old != nil {
			r = *old
		} else if copyFromProject {
			p, ok := s.proj.get(id)
			if !ok {
				continue
			}
			r = p
		} else {
			continue
		}
		fn(&r)
		r.Updated = s.now().UTC()
		e := &entry{Op: "put", Rec: &r}
		if c.remote[id] {
			e.Emb, e.Vec = c.emb.Name(), c.vecs[id]
		} else if copyFromProject && !isLocal(c.emb) {
			// c is the global collection here: s.proj.mu is free.
			if v := s.proj.vector(id); v != nil {
				e.Emb, e.Vec = c.emb.Name(), v
			}
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil
	}
	if err := c.appendLocked(ctx, entries); err != nil {
		return err
	}
	s.maybeCompact(ctx, c)
	return nil
}

// maybeCompact compacts c when its journal holds many dead lines. A
// failed compaction leaves the journal as it was, so it only warns.
func (s *Store) maybeCompact(ctx context.Context, c *collection) {
	if c.needsCompaction() {
		if err := c.compactLocked(ctx); err != nil {
			s.log.Warn("memory compaction failed; the journal is intact", "dir", c.dir, "err", err)
		}
	}
}

func isLocal(e Embedder) bool { _, ok := e.(localEmbedder); return ok }

func (c *collection) get(id string) (Record, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.recs[id]
	if r == nil {
		return Record{}, false
	}
	return *r, true
}

func (c *collection) vector(id string) []float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.vecs[id]
}

// List returns the project's records, most recently updated first.
func (s *Store) List(ctx context.Context) ([]Record, error) {
	c := s.proj
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refreshLocked(ctx, false); err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(c.recs))
	for _, r := range c.recs {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Get returns the record whose id is id or starts with id (a unique
// prefix of at least 4 characters). It wraps ErrNotFound otherwise.
func (s *Store) Get(ctx context.Context, id string) (Record, error) {
	recs, err := s.List(ctx)
	if err != nil {
		return Record{}, err
	}
	var found []Record
	for _, r := range recs {
		if r.ID == id {
			return r, nil
		}
		if len(id) >= 4 && strings.HasPrefix(r.ID, id) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Record{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return Record{}, fmt.Errorf("%w: %s is ambiguous (%d records)", ErrNotFound, id, len(found))
}

// Forget deletes records by id from the project (not from the global
// collection).
func (s *Store) Forget(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.proj.withWriteLock(ctx, func() error {
		return s.proj.appendLocked(ctx, []*entry{{Op: "del", IDs: ids}})
	})
}

// ForgetAll deletes every record of the project and compacts its journal
// to nothing.
func (s *Store) ForgetAll(ctx context.Context) error {
	c := s.proj
	return c.withWriteLock(ctx, func() error {
		if err := c.appendLocked(ctx, []*entry{{Op: "clear"}}); err != nil {
			return err
		}
		return c.compactLocked(ctx)
	})
}

// Compact rewrites the project's journal with only its live records.
func (s *Store) Compact(ctx context.Context) error {
	c := s.proj
	return c.withWriteLock(ctx, func() error { return c.compactLocked(ctx) })
}

// Stats describes a store.
type Stats struct {
	Project      string         `json:"project"`
	Root         string         `json:"root"`
	Dir          string         `json:"dir"`
	Embedder     string         `json:"embedder"`
	Records      int            `json:"records"`
	Open         int            `json:"open"`
	Resolved     int            `json:"resolved"`
	Hits         int            `json:"hits"`
	Languages    map[string]int `json:"languages"`
	Cap          int            `json:"cap"`
	JournalBytes int64          `json:"journalBytes"`
	JournalLines int            `json:"journalLines"`
	Corrupt      []Corrupt      `json:"corrupt,omitempty"`
	Reembedded   int            `json:"reembedded,omitempty"`
	ReadOnly     bool           `json:"readOnly,omitempty"`
	Global       int            `json:"global,omitempty"` // records in the global collection, when open
}

// Stats returns counts for the project (and the global collection).
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	c := s.proj
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refreshLocked(ctx, false); err != nil {
		return Stats{}, err
	}
	st := Stats{
		Project: s.project, Root: s.root, Dir: s.dir, Embedder: c.emb.Name(), Cap: s.cap,
		Records: len(c.recs), Languages: map[string]int{}, JournalBytes: c.seen, JournalLines: c.lines,
		Corrupt: append([]Corrupt(nil), c.corrupt...), Reembedded: c.reembedded, ReadOnly: !c.writable,
	}
	for _, r := range c.recs {
		if r.Outcome == OutcomeResolved {
			st.Resolved++
		} else {
			st.Open++
		}
		st.Hits += r.Hits
		lang := r.Language
		if lang == "" {
			lang = "unknown"
		}
		st.Languages[lang]++
	}
	if s.global != nil {
		s.global.mu.Lock()
		st.Global = len(s.global.recs)
		s.global.mu.Unlock()
	}
	return st, nil
}

// Export writes the project's records to w as JSON lines, oldest first.
func (s *Store) Export(ctx context.Context, w io.Writer) (int, error) {
	recs, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Created.Before(recs[j].Created) })
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return 0, fmt.Errorf("export memory: %w", err)
		}
	}
	return len(recs), bw.Flush()
}

// Import reads JSON lines written by Export (from any project) and adds or
// replaces each record, keeping its id and timestamps. Records count
// against the cap like new ones.
func (s *Store) Import(ctx context.Context, r io.Reader) (int, error) {
	dec := json.NewDecoder(r)
	n := 0
	for {
		var rec Record
		err := dec.Decode(&rec)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("import memory: record %d: %w", n+1, err)
		}
		if _, err := s.Add(ctx, rec); err != nil {
			return n, fmt.Errorf("import memory: record %d: %w", n+1, err)
		}
		n++
	}
}

// Close releases the store's file handles.
func (s *Store) Close() error {
	err := s.proj.close()
	if s.global != nil {
		err = errors.Join(err, s.global.close())
	}
	return err
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func capExcerpt(s string) string {
	if len(s) <= MaxExcerpt {
		return s
	}
	head := s[:MaxExcerpt/2]
	tail := s[len(s)-MaxExcerpt/2+32:]
	return strings.ToValidUTF8(head, "") + "\n[... cut ...]\n" + strings.ToValidUTF8(tail, "")
}

// projectMeta is meta.json in a project's directory.
type projectMeta struct {
	Embedder string `json:"embedder"`
	Root     string `json:"root,omitempty"`
	Remote   string `json:"remote,omitempty"`
}

func readMeta(dir string) projectMeta {
	var m projectMeta
	b, err := os.ReadFile(filepath.Join(dir, metaName))
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

func writeMeta(dir string, m projectMeta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, metaName), append(b, '\n'))
}

// AddBatch adds records like Add, with one journal append and one fsync
// for all of them. It returns their ids in order.
func (s *Store) AddBatch(ctx context.Context, recs []Record) ([]string, error) {
	ids := make([]string, len(recs))
	entries := make([]*entry, 0, len(recs))
	now := s.now().UTC()
	for i := range recs {
		r := recs[i]
		if err := s.prepare(&r, now); err != nil {
			return nil, err
		}
		e, err := s.putEntry(ctx, s.proj, &r)
		if err != nil {
			return nil, err
		}
		ids[i] = r.ID
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return ids, nil
	}
	err := s.proj.withWriteLock(ctx, func() error {
		if victims := s.victimsBatchLocked(ids); len(victims) > 0 {
			entries = append(entries, &entry{Op: "del", IDs: victims})
		}
		if err := s.proj.appendLocked(ctx, entries); err != nil {
			return err
		}
		s.maybeCompact(ctx, s.proj)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}
