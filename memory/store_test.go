package memory

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func openTest(t *testing.T, data, root string, opts *Options) *Store {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	opts.Root = root
	s, err := Open(t.Context(), data, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAddRecallResolveHitPersist(t *testing.T) {
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	s := openTest(t, data, root, nil)

	nilMap := "--- FAIL: TestRemember (0.00s)\npanic: assignment to entry in nil map [recovered]\n\ngoroutine 7 [running]:\nexample.com/cache.Remember(...)\n\t/tmp/x/store.go:5\n"
	id, err := s.Add(ctx, Record{Language: "go", TestID: "TestRemember", Excerpt: nilMap, Goal: "cache users", AttemptDiff: "-a\n+b", RunID: "run1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, Record{Language: "python", Excerpt: "Traceback (most recent call last):\nKeyError: 'timeout'\n"}); err != nil {
		t.Fatal(err)
	}
	query := Signature("go", "--- FAIL: TestRegister (0.01s)\npanic: assignment to entry in nil map\n\ngoroutine 9 [running]:\nexample.com/reg.Register(...)\n\t/home/u/reg.go:9\n")
	ms, err := s.Recall(ctx, query, RecallOptions{K: 3, Threshold: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].ID != id {
		t.Fatalf("Recall = %+v, want %s first", ms, id)
	}
	if ms[0].Outcome != OutcomeOpen || ms[0].Project != ProjectID(root) || ms[0].Signature == "" {
		t.Errorf("recalled record = %+v, want open, project %s, a signature", ms[0].Record, ProjectID(root))
	}
	if got, _ := s.Recall(ctx, query, RecallOptions{Language: "node"}); len(got) != 0 {
		t.Errorf("Recall(Language: node) = %d matches, want 0", len(got))
	}

	if err := s.Resolve(ctx, []string{id}, "+m := map[string]int{}", "initialise the map before writing to it"); err != nil {
		t.Fatal(err)
	}
	if err := s.Hit(ctx, []string{id, "unknown"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2 := openTest(t, data, root, nil)
	r, err := s2.Get(ctx, id[:6])
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != OutcomeResolved || r.Lesson != "initialise the map before writing to it" || r.Hits != 1 || r.Goal != "cache users" || r.RunID != "run1" {
		t.Errorf("after reopen: %+v", r)
	}
	if !r.Updated.After(r.Created) && !r.Updated.Equal(r.Created) {
		t.Errorf("Updated %v before Created %v", r.Updated, r.Created)
	}
	st, err := s2.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 2 || st.Resolved != 1 || st.Open != 1 || st.Hits != 1 || st.Languages["go"] != 1 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestSecondStoreSeesWritesWithoutReopen(t *testing.T) {
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	a := openTest(t, data, root, nil)
	b := openTest(t, data, root, nil)
	if ms, _ := b.Recall(ctx, "KeyError: 'x'", RecallOptions{}); len(ms) != 0 {
		t.Fatalf("empty store recalled %d", len(ms))
	}
	id, err := a.Add(ctx, Record{Language: "python", Excerpt: "KeyError: 'timeout'"})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := b.Recall(ctx, Signature("python", "KeyError: 'timeout'"), RecallOptions{})
	if err != nil || len(ms) != 1 || ms[0].ID != id {
		t.Fatalf("b.Recall = %v, %v; want %s", ms, err, id)
	}
	// A compaction by a (new journal file) and a forget are seen by b.
	if _, err := b.Add(ctx, Record{Language: "go", Excerpt: "panic: boom"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Forget(ctx, []string{id}); err != nil {
		t.Fatal(err)
	}
	recs, err := b.List(ctx)
	if err != nil || len(recs) != 1 || recs[0].ID == id {
		t.Fatalf("b.List after compaction and forget = %v, %v", recs, err)
	}
}

// TestKillDuringWrite SIGKILLs a writer process at random moments, 50
// times, and checks that every record the writer acknowledged survives and
// that the store always reopens. Half the rounds compact as they go, so
// kills also land in compactions.
func TestKillDuringWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 50 writer processes; skipped with -short")
	}
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	const rounds = 50
	totalTorn := 0
	for round := 0; round < rounds; round++ {
		mode := "append"
		if round%2 == 1 {
			mode = "compact"
		}
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = append(os.Environ(), "FIXPOINT_MEMORY_CHILD="+mode, "FIXPOINT_MEMORY_DATA="+data,
			"FIXPOINT_MEMORY_ROOT="+root, fmt.Sprintf("FIXPOINT_MEMORY_PREFIX=r%d", round))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it write a few records, then kill it at a random moment.
		want := 1 + rng.IntN(8)
		sc := bufio.NewScanner(out)
		n := 0
		for n < want && sc.Scan() {
			id, ok := strings.CutPrefix(sc.Text(), "ack ")
			if ok {
				acked[id] = true
				n++
			}
		}
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		// Acks printed before the kill count too.
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				acked[id] = true
			}
		}
		_ = cmd.Wait()
		if n < want {
			t.Fatalf("round %d: writer died before writing: %s", round, stderr.String())
		}

		s, err := Open(t.Context(), data, &Options{Root: root})
		if err != nil {
			t.Fatalf("round %d: Open after kill: %v", round, err)
		}
		recs, err := s.List(ctx)
		if err != nil {
			t.Fatalf("round %d: List: %v", round, err)
		}
		have := map[string]bool{}
		for _, r := range recs {
			have[r.ID] = true
		}
		for id := range acked {
			if !have[id] {
				t.Fatalf("round %d: acknowledged record %s lost (have %d records)", round, id, len(recs))
			}
		}
		st, _ := s.Stats(ctx)
		totalTorn += len(st.Corrupt)
		s.Close()
	}
	t.Logf("%d rounds, %d acknowledged records all present; %d torn lines skipped", rounds, len(acked), totalTorn)
}

// TestConcurrentWriterProcesses runs two writer processes on one project
// at once and checks that no record is lost or torn.
func TestConcurrentWriterProcesses(t *testing.T) {
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const each = 40
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, exe)
			cmd.Env = append(os.Environ(), "FIXPOINT_MEMORY_CHILD=append", "FIXPOINT_MEMORY_DATA="+data,
				"FIXPOINT_MEMORY_ROOT="+root, fmt.Sprintf("FIXPOINT_MEMORY_PREFIX=p%d", i), fmt.Sprintf("FIXPOINT_MEMORY_COUNT=%d", each))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("writer %d: %v: %s", i, err, out)
			}
		}()
	}
	// Meanwhile this process reads.
	reader := openTest(t, data, root, nil)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	reads := 0
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		default:
			if _, err := reader.Recall(ctx, "panic: crash test p0-1", RecallOptions{}); err != nil {
				t.Fatalf("Recall during writes: %v", err)
			}
			reads++
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	recs, err := reader.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := reader.Stats(ctx)
	if len(recs) != 2*each || len(st.Corrupt) != 0 {
		t.Fatalf("after two writers: %d records, %d corrupt; want %d and 0", len(recs), len(st.Corrupt), 2*each)
	}
	t.Logf("%d reads interleaved with %d writes", reads, 2*each)
}

func TestCorruptEntriesSkippedAndReported(t *testing.T) {
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	s := openTest(t, data, root, nil)
	for i := range 3 {
		if _, err := s.Add(ctx, Record{ID: fmt.Sprintf("r%d", i), Excerpt: fmt.Sprintf("Error: failure number %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	journal := filepath.Join(s.Dir(), journalName)
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	// Flip a byte inside the second record and leave a torn tail.
	lines[1][20] ^= 0x20
	torn := append(bytes.Join(lines, nil), []byte(`1234abcd {"op":"put","rec":{"id":"torn`)...)
	if err := os.WriteFile(journal, torn, 0o644); err != nil {
		t.Fatal(err)
	}

	s2 := openTest(t, data, root, nil)
	st, err := s2.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 2 || len(st.Corrupt) != 1 || st.Corrupt[0].Reason != "checksum mismatch" {
		t.Fatalf("Stats after corruption = records %d, corrupt %+v; want 2 records and 1 checksum mismatch", st.Records, st.Corrupt)
	}
	// Writing after a torn tail terminates it: the new record is readable.
	if _, err := s2.Add(ctx, Record{ID: "after", Excerpt: "Error: after the tear"}); err != nil {
		t.Fatal(err)
	}
	s3 := openTest(t, data, root, nil)
	if _, err := s3.Get(ctx, "after"); err != nil {
		t.Fatalf("record written after a torn tail: %v", err)
	}
	st3, _ := s3.Stats(ctx)
	if st3.Records != 3 || len(st3.Corrupt) != 2 {
		t.Errorf("after append: %d records, %d corrupt; want 3 and 2 (the torn line now ends in a newline)", st3.Records, len(st3.Corrupt))
	}
}

func TestCapEvictsLeastUsefulFirst(t *testing.T) {
	ctx := t.Context()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	s := openTest(t, t.TempDir(), t.TempDir(), &Options{Cap: 4, Now: now})
	for i := range 4 {
		if _, err := s.Add(ctx, Record{ID: fmt.Sprintf("r%d", i), Excerpt: fmt.Sprintf("Error: e%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// r0 earned a hit: kept. r2 was resolved recently: kept over r1 and r3? No:
	// resolving updates it, so r1 (oldest update, no hits) goes first.
	if err := s.Hit(ctx, []string{"r0"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(ctx, []string{"r1"}, "", "lesson"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"n0", "n1"} {
		if _, err := s.Add(ctx, Record{ID: id, Excerpt: "Error: " + id}); err != nil {
			t.Fatal(err)
		}
	}
	recs, _ := s.List(ctx)
	var got []string
	for _, r := range recs {
		got = append(got, r.ID)
	}
	want := "n1 n0 r1 r0" // most recently updated first; r2, r3 evicted
	if strings.Join(got, " ") != want {
		t.Errorf("after cap: %v, want %s", got, want)
	}
}

func TestCompactionKeepsLiveRecords(t *testing.T) {
	ctx := t.Context()
	s := openTest(t, t.TempDir(), t.TempDir(), nil)
	for i := range 400 {
		if _, err := s.Add(ctx, Record{ID: "same", Excerpt: fmt.Sprintf("Error: version %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := s.Stats(ctx)
	if st.Records != 1 || st.JournalLines >= 300 {
		t.Errorf("400 updates of one record: %d records, %d journal lines; want 1 and automatic compaction", st.Records, st.JournalLines)
	}
	r, _ := s.Get(ctx, "same")
	if r.Excerpt != "Error: version 399" {
		t.Errorf("after compaction the record is %q, want the last version", r.Excerpt)
	}
}

func TestForgetAllExportImport(t *testing.T) {
	ctx := t.Context()
	a := openTest(t, t.TempDir(), t.TempDir(), nil)
	for i := range 5 {
		if _, err := a.Add(ctx, Record{Language: "node", Excerpt: fmt.Sprintf("TypeError: x%d is not a function", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	n, err := a.Export(ctx, &buf)
	if err != nil || n != 5 {
		t.Fatalf("Export = %d, %v", n, err)
	}
	if err := a.ForgetAll(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.Stats(ctx); st.Records != 0 || st.JournalBytes != 0 {
		t.Errorf("after ForgetAll: %+v", st)
	}
	b := openTest(t, t.TempDir(), t.TempDir(), nil)
	n, err = b.Import(ctx, &buf)
	if err != nil || n != 5 {
		t.Fatalf("Import = %d, %v", n, err)
	}
	recs, _ := b.List(ctx)
	if len(recs) != 5 || recs[0].Project != b.ProjectID() {
		t.Errorf("imported %d records, project %q; want 5 in %s", len(recs), recs[0].Project, b.ProjectID())
	}
}

func TestGlobalCollection(t *testing.T) {
	ctx := t.Context()
	data := t.TempDir()
	p1 := openTest(t, data, t.TempDir(), &Options{Global: true})
	id, err := p1.Add(ctx, Record{Language: "python", Excerpt: "ModuleNotFoundError: No module named 'numpy'"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p1.Resolve(ctx, []string{id}, "+numpy", "add numpy to requirements.txt"); err != nil {
		t.Fatal(err)
	}
	q := Signature("python", "ModuleNotFoundError: No module named 'pandas'")
	other := openTest(t, data, t.TempDir(), nil)
	if ms, _ := other.Recall(ctx, q, RecallOptions{}); len(ms) != 0 {
		t.Errorf("project without Global recalled %d records of another project", len(ms))
	}
	p2 := openTest(t, data, t.TempDir(), &Options{Global: true})
	ms, err := p2.Recall(ctx, q, RecallOptions{})
	if err != nil || len(ms) != 1 || !ms[0].Global || ms[0].Lesson != "add numpy to requirements.txt" {
		t.Fatalf("Global Recall = %+v, %v", ms, err)
	}
}

func TestEmbedderSwitchReembeds(t *testing.T) {
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	s := openTest(t, data, root, &Options{Embedder: Local()})
	if _, err := s.Add(ctx, Record{ID: "k", Language: "python", Excerpt: "KeyError: 'a'"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	other := &scaledEmbedder{}
	s2 := openTest(t, data, root, &Options{Embedder: other})
	st, _ := s2.Stats(ctx)
	if st.Embedder != "test-embedder" || st.Reembedded != 1 {
		t.Errorf("after switch: embedder %s, reembedded %d; want test-embedder and 1", st.Embedder, st.Reembedded)
	}
	if ms, err := s2.Recall(ctx, "KeyError: 'a'", RecallOptions{}); err != nil || len(ms) != 1 {
		t.Errorf("Recall with new embedder = %v, %v", ms, err)
	}
	// Its vectors are journaled: reopening does not call it again.
	s2.Close()
	before := other.calls.Load()
	openTest(t, data, root, &Options{Embedder: other})
	if after := other.calls.Load(); after != before {
		t.Errorf("reopen with the same remote embedder embedded %d more texts", after-before)
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(t.Context(), file, &Options{Root: t.TempDir()}); err == nil {
		t.Error("Open under a regular file: want an error")
	}
	if _, err := Open(t.Context(), t.TempDir(), nil); err == nil {
		t.Error("Open without Root: want an error")
	}
}

func TestReadOnlyAndFullDataDir(t *testing.T) {
	ctx := t.Context()
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=256k"); err != nil {
		if os.Getenv("CI") == "true" { // the sandboxtest rule, without importing sandbox
			t.Fatalf("CI=true and a small tmpfs cannot be mounted (CI runs as root): %v", err)
		}
		t.Skipf("skipping outside CI: cannot mount a small tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	root := t.TempDir()
	s := openTest(t, mnt, root, nil)
	if _, err := s.Add(ctx, Record{ID: "first", Excerpt: "Error: first"}); err != nil {
		t.Fatal(err)
	}
	// Fill the disk: Add must fail with an error, leave no partial record,
	// and keep what was there.
	big := strings.Repeat("x", MaxExcerpt)
	var addErr error
	for i := 0; i < 200 && addErr == nil; i++ {
		_, addErr = s.Add(ctx, Record{Excerpt: "Error: filler " + big + fmt.Sprint(i)})
	}
	if !errors.Is(addErr, syscall.ENOSPC) {
		t.Fatalf("Add on a full disk = %v, want ENOSPC", addErr)
	}
	before, _ := s.Stats(ctx)
	s.Close()
	s2 := openTest(t, mnt, root, nil)
	after, _ := s2.Stats(ctx)
	if after.Records != before.Records || len(after.Corrupt) != 0 {
		t.Errorf("after ENOSPC: reopen has %d records (%d corrupt), want %d and 0", after.Records, len(after.Corrupt), before.Records)
	}
	s2.Close()

	if err := syscall.Mount("", mnt, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
	ro := openTest(t, mnt, root, nil)
	if _, err := ro.Add(ctx, Record{Excerpt: "Error: x"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Add on a read-only dir = %v, want ErrReadOnly", err)
	}
	if ms, err := ro.Recall(ctx, "Error: first", RecallOptions{}); err != nil || len(ms) == 0 {
		t.Errorf("Recall on a read-only dir = %v, %v; want matches", ms, err)
	}
	if _, err := Open(t.Context(), mnt, &Options{Root: t.TempDir()}); err == nil {
		t.Error("Open of a new project on a read-only dir: want an error")
	}
}

var _ = context.Background

// TestTornTailAtEveryOffset truncates the journal at every byte of its
// last record, as a crash mid-write would, and checks that the store opens
// with all earlier records and accepts new ones.
func TestTornTailAtEveryOffset(t *testing.T) {
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	s := openTest(t, data, root, nil)
	for i := range 3 {
		if _, err := s.Add(ctx, Record{ID: fmt.Sprintf("r%d", i), Excerpt: fmt.Sprintf("Error: number %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	journal := filepath.Join(s.Dir(), journalName)
	full, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lastStart := bytes.LastIndexByte(full[:len(full)-1], '\n') + 1
	for cut := lastStart; cut < len(full); cut++ {
		if err := os.WriteFile(journal, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(t.Context(), data, &Options{Root: root})
		if err != nil {
			t.Fatalf("cut at %d: Open: %v", cut, err)
		}
		recs, _ := s.List(ctx)
		if len(recs) != 2 {
			t.Fatalf("cut at %d: %d records, want the 2 committed before the torn one", cut, len(recs))
		}
		if _, err := s.Add(ctx, Record{ID: "new", Excerpt: "Error: new"}); err != nil {
			t.Fatalf("cut at %d: Add: %v", cut, err)
		}
		s.Close()
		s, _ = Open(t.Context(), data, &Options{Root: root})
		if _, err := s.Get(ctx, "new"); err != nil {
			t.Fatalf("cut at %d: record added after the tear is lost: %v", cut, err)
		}
		s.Close()
	}
}

// TestVectorCache: a large store reopens from the vector cache, and a
// stale or corrupt cache is never trusted.
func TestVectorCache(t *testing.T) {
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	recs, err := syntheticRecords(600, 3)
	if err != nil {
		t.Fatal(err)
	}
	s := openTest(t, data, root, nil)
	if _, err := s.AddBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// First open embeds everything and writes the cache.
	s1 := openTest(t, data, root, nil)
	if s1.proj.embedded != 0 {
		t.Errorf("after the first open, %d records pending a cache write", s1.proj.embedded)
	}
	cache := filepath.Join(s1.Dir(), vcacheName)
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no vector cache after opening 600 records: %v", err)
	}
	want, _ := s1.Recall(ctx, recs[5].Signature, RecallOptions{K: 3})
	s1.Close()

	// Change one record's text behind the cache's back: its vector must be
	// recomputed, the others come from the cache.
	s2 := openTest(t, data, root, nil)
	r := recs[5]
	r.Signature = "lang: go\npanic: something else entirely"
	if _, err := s2.Add(ctx, r); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	s3 := openTest(t, data, root, nil)
	if s3.proj.embedded != 1 {
		t.Errorf("reopen embedded %d records, want 1 (the changed one)", s3.proj.embedded)
	}
	fresh := embedLocal(embedText(s3.proj.recs[r.ID]))
	for i, x := range s3.proj.vecs[r.ID] {
		if x != fresh[i] {
			t.Fatal("changed record got its stale cached vector")
		}
	}
	s3.Close()

	// A corrupt cache is ignored as a whole; results are the same.
	if err := os.WriteFile(cache, []byte(vcacheMagic+"garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	s4 := openTest(t, data, root, nil)
	got, err := s4.Recall(ctx, recs[6].Signature, RecallOptions{K: 3})
	if err != nil || len(got) != 3 || len(want) != 3 {
		t.Fatalf("Recall with a corrupt cache = %v, %v", got, err)
	}
}

// TestConcurrentGoroutines shares one Store between writers and readers
// (run with -race), with a second Store on the same project.
func TestConcurrentGoroutines(t *testing.T) {
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	s := openTest(t, data, root, nil)
	other := openTest(t, data, root, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := s
			if w%2 == 1 {
				st = other
			}
			for i := range 10 {
				id, err := st.Add(ctx, Record{Language: "go", Excerpt: fmt.Sprintf("panic: worker %d step %d", w, i)})
				if err != nil {
					errs <- err
					return
				}
				if _, err := st.Recall(ctx, "panic: worker step", RecallOptions{K: 3}); err != nil {
					errs <- err
					return
				}
				if err := st.Hit(ctx, []string{id}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, st := range []*Store{s, other} {
		recs, err := st.List(ctx)
		if err != nil || len(recs) != 40 {
			t.Fatalf("List = %d records, %v; want 40", len(recs), err)
		}
		for _, r := range recs {
			if r.Hits != 1 {
				t.Errorf("record %s has %d hits, want 1", r.ID, r.Hits)
			}
		}
	}
}

func TestLanguagePartitions(t *testing.T) {
	ctx := t.Context()
	s := openTest(t, t.TempDir(), t.TempDir(), nil)
	if _, err := s.Add(ctx, Record{ID: "r", Language: "python", Excerpt: "TypeError: boom"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, Record{ID: "q", Excerpt: "TypeError: boom boom"}); err != nil {
		t.Fatal(err)
	}
	// Replacing the record under another language moves it.
	if _, err := s.Add(ctx, Record{ID: "r", Language: "node", Excerpt: "TypeError: boom"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		lang string
		want string
	}{{"python", ""}, {"node", "r"}, {"", "q r"}} {
		ms, err := s.Recall(ctx, "TypeError: boom", RecallOptions{Language: tt.lang})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
		sort.Strings(ids)
		if got := strings.Join(ids, " "); got != tt.want {
			t.Errorf("Recall(Language %q) = %q, want %q", tt.lang, got, tt.want)
		}
	}
	if err := s.Forget(ctx, []string{"r"}); err != nil {
		t.Fatal(err)
	}
	if ms, _ := s.Recall(ctx, "TypeError: boom", RecallOptions{Language: "node"}); len(ms) != 0 {
		t.Errorf("forgotten record still recalled: %v", ms)
	}
}

// TestPrivateModes: the memory directory is 0700 and its files 0600, and
// a store an older version left world-readable is tightened at open.
func TestPrivateModes(t *testing.T) {
	ctx := t.Context()
	data, root := t.TempDir(), t.TempDir()
	dir := filepath.Join(data, "memory", "projects", ProjectID(root))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, journalName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, data, root, nil)
	if _, err := s.Add(ctx, Record{Language: "go", Excerpt: "--- FAIL: TestX\npanic: boom\n"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTest(t, data, root, nil) // reopen: tighten is idempotent
	s.Close()
	check := func(p string, want os.FileMode) {
		t.Helper()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("mode of %s = %o, want %o", p, st.Mode().Perm(), want)
		}
	}
	check(dir, 0o700)
	ents, _ := os.ReadDir(dir)
	if len(ents) < 2 {
		t.Fatalf("memory dir holds %d files, want the journal and its lock at least", len(ents))
	}
	for _, e := range ents {
		check(filepath.Join(dir, e.Name()), 0o600)
	}
	fresh := t.TempDir()
	s = openTest(t, fresh, root, nil)
	if _, err := s.Add(ctx, Record{Language: "go", Excerpt: "x"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	check(filepath.Join(fresh, "memory", "projects", ProjectID(root)), 0o700)
	check(filepath.Join(fresh, "memory", "projects", ProjectID(root), journalName), 0o600)
}
