package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"

	chromem "github.com/philippgille/chromem-go"
)

// collection is one journal directory (a project's, or the global one)
// loaded into an in-memory chromem-go collection.
//
// Invariant: recs, vecs and db hold exactly the journal's valid entries up
// to offset, applied in order. mu guards every field below it.
type collection struct {
	dir      string
	emb      Embedder
	log      *slog.Logger
	lock     *fileLock // nil when the directory is read-only and has no lock file
	writable bool

	mu     sync.Mutex
	recs   map[string]*Record
	vecs   map[string][]float32
	remote map[string]bool // ids whose vector came from the journal (remote embedder)
	// db holds one chromem collection per language, so that a recall
	// restricted to a language scans only its records (chromem's metadata
	// filter still visits every document). idxLang is the collection each
	// record is indexed in.
	db      *chromem.DB
	cols    map[string]*chromem.Collection
	idxLang map[string]string
	ino     uint64 // journal inode read so far; compaction changes it
	offset  int64  // end of the last complete line read
	seen    int64  // journal size at the last refresh
	lines   int    // valid entries read since the journal was (re)written
	corrupt []Corrupt
	// embedded counts records embedded since the vector cache was written.
	embedded int
	// reembedded counts records whose vectors were rebuilt at open because
	// the embedder changed.
	reembedded int
	prevEmb    string
}

func openCollection(ctx context.Context, dir string, emb Embedder, log *slog.Logger) (*collection, error) {
	c := &collection{dir: dir, emb: emb, log: log}
	if err := makePrivateDir(dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, journalName)); serr != nil {
			return nil, fmt.Errorf("create memory dir %s: %w", dir, err)
		}
	}
	lock, writable, err := openLock(dir)
	if err != nil && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		return nil, fmt.Errorf("open memory lock in %s: %w", dir, err)
	}
	c.lock, c.writable = lock, writable
	if !c.writable {
		log.Warn("memory is read-only: failures will not be recorded", "dir", dir, "err", err)
	}
	c.prevEmb = readMeta(dir).Embedder
	c.reset()
	if err := c.load(ctx); err != nil {
		if c.lock != nil {
			c.lock.close()
		}
		return nil, err
	}
	return c, nil
}

// load reads the journal at open, reports what changed and journals the
// vectors a remote embedder had to compute.
func (c *collection) load(ctx context.Context) error {
	dir, emb, log := c.dir, c.emb, c.log
	c.mu.Lock()
	if err := c.refreshLocked(ctx, false); err != nil {
		c.mu.Unlock()
		return err
	}
	if c.prevEmb != "" && c.prevEmb != emb.Name() && len(c.recs) > 0 {
		c.reembedded = len(c.recs) - len(c.remote)
		log.Warn("memory embedder changed: re-embedded records from the journal",
			"dir", dir, "from", c.prevEmb, "to", emb.Name(), "records", len(c.recs))
	}
	if c.writable && c.prevEmb != emb.Name() {
		m := readMeta(dir)
		m.Embedder = emb.Name()
		if err := writeMeta(dir, m); err != nil {
			log.Warn("memory: cannot record the embedder", "dir", dir, "err", err)
		}
	}
	if len(c.corrupt) > 0 {
		log.Warn("memory journal has corrupt entries; they were skipped",
			"dir", dir, "count", len(c.corrupt), "first_offset", c.corrupt[0].Offset, "reason", c.corrupt[0].Reason)
	}
	if isLocal(emb) && c.writable && c.embedded >= vcacheMin {
		if err := c.writeVCacheLocked(); err != nil {
			log.Warn("memory: vector cache not written", "dir", dir, "err", err)
		}
		c.embedded = 0
	}
	var missing []string
	if !isLocal(emb) && c.writable {
		for id := range c.recs {
			if !c.remote[id] {
				missing = append(missing, id)
			}
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	// Journal the new vectors so the next open does not call the endpoint.
	err := c.withWriteLock(ctx, func() error {
		var entries []*entry
		for _, id := range missing {
			if r := c.recs[id]; r != nil && !c.remote[id] {
				entries = append(entries, &entry{Op: "put", Rec: r, Emb: emb.Name(), Vec: c.vecs[id]})
			}
		}
		if len(entries) == 0 {
			return nil
		}
		return c.appendLocked(ctx, entries)
	})
	if err != nil {
		log.Warn("memory: cannot journal re-embedded vectors", "dir", dir, "err", err)
	}
	return nil
}

// reset empties the in-memory state (before a full reload).
func (c *collection) reset() {
	c.recs = map[string]*Record{}
	c.vecs = map[string][]float32{}
	c.remote = map[string]bool{}
	c.db = chromem.NewDB()
	c.cols = map[string]*chromem.Collection{}
	c.idxLang = map[string]string{}
	c.ino, c.offset, c.seen, c.lines = 0, 0, 0, 0
	c.corrupt = nil
}

// col returns the chromem collection of lang, creating it.
func (c *collection) col(lang string) (*chromem.Collection, error) {
	if col := c.cols[lang]; col != nil {
		return col, nil
	}
	embFn := func(ctx context.Context, text string) ([]float32, error) {
		v, err := c.emb.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return v[0], nil
	}
	// Never nil: a nil EmbeddingFunc makes chromem call OpenAI.
	col, err := c.db.CreateCollection("failures-"+lang, nil, embFn)
	if err != nil {
		return nil, fmt.Errorf("memory index: %w", err)
	}
	c.cols[lang] = col
	return col, nil
}

// unindex removes ids from their chromem collections.
func (c *collection) unindex(ctx context.Context, ids []string) error {
	byLang := map[string][]string{}
	for _, id := range ids {
		if lang, ok := c.idxLang[id]; ok {
			byLang[lang] = append(byLang[lang], id)
			delete(c.idxLang, id)
		}
	}
	for lang, ids := range byLang {
		if err := c.cols[lang].Delete(ctx, nil, nil, ids...); err != nil {
			return fmt.Errorf("memory index delete: %w", err)
		}
	}
	return nil
}

func (c *collection) journalPath() string { return filepath.Join(c.dir, journalName) }

// refreshLocked loads what other writers appended (or the whole journal
// after a compaction). haveLock is true when the caller already holds the
// exclusive write lock. c.mu must be held.
func (c *collection) refreshLocked(ctx context.Context, haveLock bool) error {
	st, err := os.Stat(c.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		if len(c.recs) > 0 || c.offset > 0 {
			c.reset()
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat memory journal: %w", err)
	}
	ino := st.Sys().(*syscall.Stat_t).Ino
	if ino == c.ino && st.Size() == c.seen {
		return nil
	}
	if !haveLock && c.lock != nil {
		if err := c.lock.lock(false); err != nil {
			return fmt.Errorf("lock memory journal: %w", err)
		}
		defer c.lock.unlock()
	}
	f, err := os.Open(c.journalPath())
	if err != nil {
		return fmt.Errorf("open memory journal: %w", err)
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat memory journal: %w", err)
	}
	ino = fst.Sys().(*syscall.Stat_t).Ino
	if ino != c.ino {
		c.reset()
		c.ino = ino
	}
	dirty := map[string]bool{}
	var deleted []string
	off, bad, err := readJournal(f, c.offset, func(e *entry) {
		c.lines++
		switch e.Op {
		case "put":
			if e.Rec == nil || e.Rec.ID == "" {
				return
			}
			r := *e.Rec
			old := c.recs[r.ID]
			c.recs[r.ID] = &r
			if len(e.Vec) > 0 && e.Emb == c.emb.Name() {
				c.vecs[r.ID] = e.Vec
				c.remote[r.ID] = true
				dirty[r.ID] = true
			} else if c.vecs[r.ID] == nil || old != nil && embedText(old) != embedText(&r) {
				// (A vector without an old record was carried over by a
				// compaction, which rewrites the same records.)
				delete(c.vecs, r.ID)
				delete(c.remote, r.ID)
				dirty[r.ID] = true
			}
		case "del":
			for _, id := range e.IDs {
				if c.recs[id] != nil {
					delete(c.recs, id)
					delete(c.vecs, id)
					delete(c.remote, id)
					delete(dirty, id)
					deleted = append(deleted, id)
				}
			}
		case "clear":
			for id := range c.recs {
				deleted = append(deleted, id)
			}
			c.recs = map[string]*Record{}
			c.vecs = map[string][]float32{}
			c.remote = map[string]bool{}
			clear(dirty)
		}
	})
	c.corrupt = append(c.corrupt, bad...)
	c.offset, c.seen = off, fst.Size()
	if err != nil {
		return err
	}
	if err := c.unindex(ctx, deleted); err != nil {
		return err
	}
	return c.index(ctx, dirty)
}

// index embeds (when needed) and indexes the records in ids.
func (c *collection) index(ctx context.Context, ids map[string]bool) error {
	var need []string
	for id := range ids {
		if c.vecs[id] == nil {
			need = append(need, id)
		}
	}
	sort.Strings(need)
	if len(need) >= vcacheMin && isLocal(c.emb) {
		need = c.fromVCache(need)
	}
	if len(need) > 0 {
		c.embedded += len(need)
		vecs, err := c.embedParallel(ctx, need)
		if err != nil {
			return fmt.Errorf("embed %d memory records with %s: %w", len(need), c.emb.Name(), err)
		}
		for i, id := range need {
			c.vecs[id] = vecs[i]
		}
	}
	for id := range ids {
		r := c.recs[id]
		if old, ok := c.idxLang[id]; ok && old != r.Language {
			if err := c.unindex(ctx, []string{id}); err != nil {
				return err
			}
		}
		col, err := c.col(r.Language)
		if err != nil {
			return err
		}
		if err := col.AddDocument(ctx, chromem.Document{ID: id, Embedding: c.vecs[id]}); err != nil {
			return fmt.Errorf("memory index add: %w", err)
		}
		c.idxLang[id] = r.Language
	}
	return nil
}

// fromVCache fills vectors of ids from the vector cache when their text
// is unchanged, and returns the ids still to embed.
func (c *collection) fromVCache(ids []string) []string {
	cache := readVCache(c.dir, c.emb.Name())
	if cache == nil {
		return ids
	}
	var rest []string
	for _, id := range ids {
		cv, ok := cache[id]
		if ok && cv.textHash == textHash(embedText(c.recs[id])) {
			c.vecs[id] = cv.vec
			continue
		}
		rest = append(rest, id)
	}
	return rest
}

// embedParallel embeds the signatures of ids. The local embedder runs on
// every CPU; a remote one gets batches in order.
func (c *collection) embedParallel(ctx context.Context, ids []string) ([][]float32, error) {
	texts := make([]string, len(ids))
	for i, id := range ids {
		texts[i] = embedText(c.recs[id])
	}
	if _, ok := c.emb.(localEmbedder); !ok || len(texts) < 256 {
		return c.emb.Embed(ctx, texts)
	}
	out := make([][]float32, len(texts))
	workers := runtime.GOMAXPROCS(0)
	chunk := (len(texts) + workers - 1) / workers
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(texts))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.emb.Embed(ctx, texts[lo:hi])
			copy(out[lo:hi], v)
			errs[w] = err
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// embedText is what the index embeds for a record.
func embedText(r *Record) string {
	if r.Signature != "" {
		return r.Signature
	}
	return r.Excerpt
}

// withWriteLock runs fn holding c.mu and the exclusive file lock, after
// loading what other writers appended. c.mu is always taken first: flock
// does not exclude goroutines sharing the lock file's descriptor.
func (c *collection) withWriteLock(ctx context.Context, fn func() error) error {
	if !c.writable {
		return ErrReadOnly
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.lock.lock(true); err != nil {
		return fmt.Errorf("lock memory journal: %w", err)
	}
	defer c.lock.unlock()
	if err := c.refreshLocked(ctx, true); err != nil {
		return err
	}
	return fn()
}

// appendLocked appends entries to the journal, fsyncs, and applies them
// (and anything appended before them) to the in-memory state.
func (c *collection) appendLocked(ctx context.Context, entries []*entry) error {
	var buf []byte
	for _, e := range entries {
		line, err := encodeEntry(e)
		if err != nil {
			return err
		}
		buf = append(buf, line...)
	}
	if err := appendEntries(c.journalPath(), buf); err != nil {
		return fmt.Errorf("memory %s: %w", c.dir, err)
	}
	return c.refreshLocked(ctx, true)
}

// compactLocked rewrites the journal with one put per live record. The
// caller holds the exclusive lock and has refreshed.
func (c *collection) compactLocked(ctx context.Context) error {
	ids := make([]string, 0, len(c.recs))
	for id := range c.recs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var buf []byte
	for _, id := range ids {
		e := &entry{Op: "put", Rec: c.recs[id]}
		if c.remote[id] {
			e.Emb, e.Vec = c.emb.Name(), c.vecs[id]
		}
		line, err := encodeEntry(e)
		if err != nil {
			return err
		}
		buf = append(buf, line...)
	}
	if err := writeFileAtomic(c.journalPath(), buf); err != nil {
		return fmt.Errorf("compact memory journal: %w", err)
	}
	// Reload from the new file: cheap, and keeps one code path.
	corrupt, vecs := c.corrupt, c.vecs
	c.reset()
	// The records are unchanged: keep their vectors instead of re-embedding.
	for id, v := range vecs {
		c.vecs[id] = v
	}
	err := c.refreshLocked(ctx, true)
	c.corrupt = append(corrupt, c.corrupt...)
	if err == nil && isLocal(c.emb) && len(c.recs) >= vcacheMin {
		if werr := c.writeVCacheLocked(); werr != nil {
			c.log.Warn("memory: vector cache not written", "dir", c.dir, "err", werr)
		}
		c.embedded = 0
	}
	return err
}

// needsCompaction is true when the journal holds many dead lines.
func (c *collection) needsCompaction() bool {
	return c.lines > 2*len(c.recs)+256
}

func (c *collection) close() error {
	c.mu.Lock()
	if c.writable && isLocal(c.emb) && c.embedded >= vcacheMin {
		if err := c.writeVCacheLocked(); err != nil {
			c.log.Warn("memory: vector cache not written", "dir", c.dir, "err", err)
		}
		c.embedded = 0
	}
	c.mu.Unlock()
	if c.lock != nil {
		return c.lock.close()
	}
	return nil
}
