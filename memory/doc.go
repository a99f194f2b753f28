// Package memory is fixpoint's per-project failure memory: what failed in
// a project, and what fixed it, recalled by similarity in later runs.
//
// The main types are [Store] (opened with [Open]), [Record] (one remembered
// failure), [Match] (a recalled record and its similarity) and [Embedder]
// ([Local], the default, and [NewOpenAI]). [Signature] normalises raw test
// output into what identifies an error.
//
// # Project id
//
// [ProjectID] is the first 16 hex digits of sha256 of the canonical project
// root (absolute, symlinks resolved) and the git remote URL: "origin", else
// the first remote listed in .git/config (worktrees and submodules are
// followed through their "gitdir:" file), with credentials removed; "" when
// there is no repository or no remote. git is not executed: the config is
// read by package gitrepo, whose no-follow, non-blocking, bounded open
// keeps a planted symlink or named pipe from redirecting or blocking it. The same
// checkout therefore always finds its memory; two clones at different paths
// keep separate memories; changing the remote URL starts a new one.
//
// # On disk
//
//	<data dir>/memory/projects/<project id>/journal.jsonl  the records (source of truth)
//	                                        lock           flock for writers
//	                                        meta.json      root, remote, embedder
//	<data dir>/memory/global/...                           opt-in cross-project lessons
//
// The journal is append-only: one line per change, "<crc32c> <json>\n".
// An append is written in one write and fsynced before Add, Resolve, Hit or
// Forget return, under an exclusive flock; so a record whose call returned
// survives kill -9 and power loss. A writer killed mid-append leaves at
// most a torn last line: readers ignore a line without its newline, the
// next writer terminates it, and a line whose checksum fails is skipped,
// logged and listed by [Store.Stats] (never fatal). Compaction (automatic
// when dead lines outnumber live records, and on [Store.ForgetAll]) writes a
// new file, fsyncs it and renames it over the old one.
//
// At [Open] the journal is loaded into an in-memory chromem-go collection
// (chromem.NewDB; chromem's own one-gob-per-document persistence is not
// used, see DEPS.md). Another process appending to the journal is picked up
// by the next call (each call stats the journal and reads the new tail; a
// compaction changes the inode and triggers a full reload).
//
// # Embeddings
//
// Records are embedded by their Signature. [Local] is deterministic and
// offline (hashed words, identifier parts, word bigrams and character
// trigrams, 512 dimensions, L2-normalised). With [NewOpenAI] vectors come
// from an OpenAI-compatible /embeddings endpoint and are journaled with the
// records. meta.json records which embedder built the store; opening it
// with another one re-embeds every record from the journal's raw text
// (logged, and counted in Stats.Reembedded). An embedder error is returned,
// never replaced by another embedder.
//
// # Degrading
//
// Open returns an error when the data dir can neither be created nor
// read, and a read-only store (writes return [ErrReadOnly]) when it can be
// read but not written. On a full disk, writes return the wrapped ENOSPC and
// leave the journal as it was. Callers (the agent loop) warn and go on
// without memory.
package memory
