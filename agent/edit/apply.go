package edit

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// ApplyOptions configure Apply. nil means the defaults.
type ApplyOptions struct {
	// Root is the workspace on the host, where every path is resolved
	// without following symlinks (see CheckPaths); "" means the
	// snapshot's Root, and no host check when that is "" too.
	Root string
	// AllowProtected lists protected files the model may change anyway
	// ([policy] allow_protected): exact paths, "dir/" prefixes or
	// path.Match patterns. fixpoint's own configuration stays protected.
	AllowProtected []string
	// Protect adds workspace paths (files, or directories ending in "/")
	// to the protected ones, such as a sandbox Dockerfile the
	// configuration names.
	Protect []string
	// Secrets adds workspace paths to the secret files: files whose
	// contents hold a credential (sandbox.Snapshot.Credentials).
	Secrets []string
}

// ApplyError is a block that cannot be applied. Its message is precise
// enough to send back to the model (see FormatFeedback).
type ApplyError struct {
	Block  int    // 1-based block number in the reply
	Path   string // the block's path as written
	Reason string // one sentence, naming the block and the file
	Nearby string // the file's closest lines, numbered, when useful
	Err    error  // the cause when there is one (ErrOutside, ErrProtected…), for errors.Is
}

func (e *ApplyError) Error() string {
	if e.Nearby == "" {
		return e.Reason
	}
	return e.Reason + ":\n" + e.Nearby
}

// Unwrap returns the cause.
func (e *ApplyError) Unwrap() error { return e.Err }

// ErrOutside marks a path outside the workspace: absolute, with "..",
// through a symlink, or inside a git directory. Refusals for symlinks and
// git directories match both ErrOutside and their own sentinel.
var ErrOutside = errors.New("path outside the workspace")

// Apply applies blocks to snap in order (a later block sees the result of
// an earlier one on the same file) and returns the new contents of the
// files that changed, keyed by clean workspace-relative path. It is all or
// nothing: on error the result is nil and the error is an *ApplyError for
// the first block that failed.
//
// Before a block is applied its path is checked by name (git names in any
// spelling, secret files, protected files) and against the git
// directories the snapshot's gitdir and commondir files point to, then
// resolved on the host under Root one component at a time, as CheckPaths does. A
// secret file's content is never quoted in the error. After the last
// block, no directory holding a changed file may look like a git
// directory in the result.
func Apply(snap *sandbox.Snapshot, blocks []Block, opts *ApplyOptions) (map[string][]byte, error) {
	var o ApplyOptions
	if opts != nil {
		o = *opts
	}
	if o.Root == "" {
		o.Root = snap.Root
	}
	var host *hostRoot
	if o.Root != "" {
		if h, err := openRoot(o.Root); err == nil {
			host = h
			defer h.close()
		}
	}
	targets := gitDirTargets(snap)
	work := map[string][]byte{}
	get := func(p string) ([]byte, bool, error) {
		if b, ok := work[p]; ok {
			return b, b != nil, nil
		}
		f, ok := snap.Files[p]
		if !ok {
			return nil, false, nil
		}
		b, err := f.Bytes()
		return b, true, err
	}
	for i, b := range blocks {
		n := b.Index
		if n == 0 {
			n = i + 1
		}
		p, err := sandbox.CleanRel(b.Path)
		if err != nil {
			return nil, &ApplyError{Block: n, Path: b.Path, Err: ErrOutside,
				Reason: fmt.Sprintf("block %d: %v: paths must be relative to the workspace root, without ..", n, err)}
		}
		if err := checkPath(snap, host, targets, p, &o); err != nil {
			return nil, &ApplyError{Block: n, Path: b.Path, Err: err, Reason: fmt.Sprintf("block %d: %v", n, err)}
		}
		cur, exists, err := get(p)
		if err != nil {
			return nil, &ApplyError{Block: n, Path: b.Path, Err: err, Reason: fmt.Sprintf("block %d: %v", n, err)}
		}
		next, aerr := applyOne(snap, p, cur, exists, b, n)
		if aerr != nil {
			return nil, aerr
		}
		work[p] = next
	}
	if err := checkGitDirs(snap, work, host); err != nil {
		return nil, &ApplyError{Path: err.path, Err: err.err, Reason: err.err.Error()}
	}
	out := map[string][]byte{}
	for p, data := range work {
		if old, ok := snap.Text(p); ok && old == string(data) {
			continue
		}
		out[p] = data
	}
	return out, nil
}

// checkPath refuses p by name, by the snapshot's symlinks and git
// directories, and on the host (when host is not nil).
func checkPath(snap *sandbox.Snapshot, host *hostRoot, gitDirs []string, p string, o *ApplyOptions) error {
	if err := checkName(p, o); err != nil {
		return asOutside(err)
	}
	// A snapshot that records symlinks marks them with fs.ModeSymlink.
	for sub := p; sub != "."; sub = path.Dir(sub) {
		if f, ok := snap.Files[sub]; ok && f.Mode&fs.ModeSymlink != 0 {
			return asOutside(refuse(ErrSymlink, "%s goes through %s, which is a symlink", p, sub))
		}
	}
	for _, d := range gitDirs {
		if under(p, d) {
			return asOutside(refuse(ErrGitDir, "%s is inside %s, a git directory (a gitdir or commondir file points there)", p, d))
		}
	}
	if host != nil {
		if err := host.inspect(p); err != nil {
			return asOutside(err)
		}
	}
	return nil
}

// asOutside makes symlink and git-directory refusals match ErrOutside too.
func asOutside(err error) error {
	if errors.Is(err, ErrSymlink) || errors.Is(err, ErrGitDir) || errors.Is(err, ErrNotRegular) {
		return &outsideError{err}
	}
	return err
}

type outsideError struct{ err error }

func (e *outsideError) Error() string   { return e.err.Error() }
func (e *outsideError) Unwrap() []error { return []error{e.err, ErrOutside} }

type pathError struct {
	path string
	err  error
}

// checkGitDirs refuses a result in which a directory holding a changed
// file looks like a git directory (HEAD with objects and refs, or with
// commondir), counting the result's files and the host's.
func checkGitDirs(snap *sandbox.Snapshot, work map[string][]byte, host *hostRoot) *pathError {
	dirs := map[string]bool{}
	mark := func(p string) {
		for d := path.Dir(p); ; d = path.Dir(d) {
			dirs[d] = true
			if d == "." {
				return
			}
		}
	}
	for p := range snap.Files {
		if d, ok := work[p]; !ok || d != nil {
			mark(p)
		}
	}
	for p, d := range work {
		if d != nil {
			mark(p)
		}
	}
	has := func(rel string) bool {
		if _, ok := work[rel]; ok {
			return work[rel] != nil
		}
		if _, ok := snap.Files[rel]; ok || dirs[rel] {
			return true
		}
		return host != nil && host.exists(rel)
	}
	for _, p := range sortedPaths(work) {
		for d := path.Dir(p); ; d = path.Dir(d) {
			if looksLikeGitDir(d, has) {
				return &pathError{p, asOutside(refuse(ErrGitDir, "the edits make %s look like a git directory (HEAD with objects and refs, or commondir), and %s is inside it", dirName(strings.Split(d, "/")), p))}
			}
			if d == "." {
				break
			}
		}
	}
	return nil
}

func sortedPaths[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func applyOne(snap *sandbox.Snapshot, p string, cur []byte, exists bool, b Block, n int) ([]byte, *ApplyError) {
	fail := func(reason, nearby string) *ApplyError {
		return &ApplyError{Block: n, Path: b.Path, Reason: reason, Nearby: nearby}
	}
	if !exists {
		if msg := pathConflict(snap, p); msg != "" {
			return nil, fail(fmt.Sprintf("block %d: %s", n, msg), "")
		}
	}
	if b.Search == "" {
		switch {
		case !exists:
			return []byte(b.Replace), nil
		case strings.TrimSpace(string(cur)) == "":
			return []byte(b.Replace), nil
		}
		return nil, fail(fmt.Sprintf("block %d has an empty SEARCH part but file %s already exists and is not empty: copy the lines to change into SEARCH", n, p), "")
	}
	if !exists {
		msg := fmt.Sprintf("file %s does not exist (block %d): to create it, leave the SEARCH part empty", p, n)
		if s := similarPaths(snap, p); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return nil, fail(msg, "")
	}
	f := splitFile(string(cur))
	search := splitBlock(b.Search)
	replace := splitBlock(b.Replace)

	matches := findExact(f.lines, search)
	tolerant := false
	if len(matches) == 0 {
		search = trimBlank(search)
		matches = findTolerant(f.lines, search)
		tolerant = true
	}
	if len(matches) == 0 {
		// Models copy the numbered lines of our own feedback ("10| x").
		if s, ok := stripNumbers(search); ok {
			if m := findTolerant(f.lines, s); len(m) > 0 {
				search, matches = s, m
				if r, ok := stripNumbers(replace); ok {
					replace = r
				}
			}
		}
	}
	switch {
	case len(matches) > 1:
		var at []string
		for _, m := range matches[:min(len(matches), 5)] {
			at = append(at, lineRange(m, m+len(search)))
		}
		return nil, fail(fmt.Sprintf("the SEARCH text of block %d matches %d places in file %s (%s): include more surrounding lines so that it matches exactly one", n, len(matches), p, strings.Join(at, ", ")), "")
	case len(matches) == 0:
		lo, hi := closest(f.lines, search)
		if hi <= lo {
			return nil, fail(fmt.Sprintf("file %s does not contain the SEARCH text of block %d, and nothing in it is close", p, n), "")
		}
		return nil, fail(fmt.Sprintf("file %s does not contain the SEARCH text of block %d; %s", p, n, closestPhrase(lo, hi)), numbered(f.lines, lo, hi))
	}
	at := matches[0]
	if tolerant {
		replace = reindent(search, f.lines[at:at+len(search)], replace)
	}
	lines := make([]string, 0, len(f.lines)-len(search)+len(replace))
	lines = append(lines, f.lines[:at]...)
	lines = append(lines, replace...)
	lines = append(lines, f.lines[at+len(search):]...)
	f.lines = lines
	return []byte(f.String()), nil
}

// numberRE is the line-number prefix of numbered (see numbered).
var numberRE = regexp.MustCompile(`^\s*\d+\| ?`)

// stripNumbers removes "12| " prefixes when every non-blank line has one.
func stripNumbers(lines []string) ([]string, bool) {
	out := make([]string, len(lines))
	seen := false
	for i, l := range lines {
		loc := numberRE.FindStringIndex(l)
		switch {
		case loc != nil:
			out[i], seen = l[loc[1]:], true
		case strings.TrimSpace(l) == "":
			out[i] = ""
		default:
			return nil, false
		}
	}
	return out, seen
}

// file is a text split into lines without terminators.
type file struct {
	lines   []string
	eol     string // "\n" or "\r\n"
	finalNL bool   // the text ended with a line terminator
}

func splitFile(s string) file {
	f := file{eol: "\n"}
	if s == "" {
		return f
	}
	if strings.HasSuffix(s, "\n") {
		f.finalNL = true
		s = s[:len(s)-1]
	}
	f.lines = strings.Split(s, "\n")
	crlf := strings.Count(s, "\r\n")
	if crlf > 0 && crlf == strings.Count(s, "\n") && (!f.finalNL || strings.HasSuffix(f.lines[len(f.lines)-1], "\r")) {
		f.eol = "\r\n"
		for i, l := range f.lines {
			f.lines[i] = strings.TrimSuffix(l, "\r")
		}
	}
	return f
}

func (f file) String() string {
	if len(f.lines) == 0 {
		return ""
	}
	s := strings.Join(f.lines, f.eol)
	if f.finalNL {
		s += f.eol
	}
	return s
}

// splitBlock splits a block part (lines ending in "\n") into lines.
func splitBlock(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func findExact(lines, search []string) []int {
	return find(lines, search, func(a, b string) bool { return a == b })
}

func findTolerant(lines, search []string) []int {
	if len(search) == 0 {
		return nil
	}
	norm := make([]string, len(search))
	for i, s := range search {
		norm[i] = normalize(s)
	}
	fl := make([]string, len(lines))
	for i, l := range lines {
		fl[i] = normalize(l)
	}
	return find(fl, norm, func(a, b string) bool { return a == b })
}

// find returns the start of every non-overlapping place where search
// occurs in lines. It compares rolling hashes of line windows and checks
// candidates, so it is linear in practice even for long SEARCH parts.
func find(lines, search []string, eq func(a, b string) bool) []int {
	m := len(search)
	if m == 0 || m > len(lines) {
		return nil
	}
	const base = 1000003
	var pow uint64 = 1 // base^(m-1)
	for k := 1; k < m; k++ {
		pow *= base
	}
	var want, h uint64
	for k := 0; k < m; k++ {
		want = want*base + lineHash(search[k])
		h = h*base + lineHash(lines[k])
	}
	var out []int
	for i := 0; ; i++ {
		if h == want && matchAt(lines, search, i, eq) && (len(out) == 0 || i >= out[len(out)-1]+m) {
			out = append(out, i)
		}
		if i+m >= len(lines) {
			return out
		}
		h = (h-lineHash(lines[i])*pow)*base + lineHash(lines[i+m])
	}
}

func matchAt(lines, search []string, i int, eq func(a, b string) bool) bool {
	for j := range search {
		if !eq(lines[i+j], search[j]) {
			return false
		}
	}
	return true
}

// lineHash is FNV-1a.
func lineHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// normalize collapses whitespace: "  a  =\tb " → "a = b".
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// reindent maps the replacement's indentation onto the file's, learning
// the mapping from the SEARCH lines and the file lines they matched: an
// indentation seen in SEARCH maps to the file's; deeper ones are converted
// level by level (e.g. 4 spaces → 1 tab); shallower ones shift by the base
// difference.
func reindent(search, matched, replace []string) []string {
	known := map[string]string{}
	var s0, f0 string
	first := true
	for i, s := range search {
		if strings.TrimSpace(s) == "" {
			continue
		}
		si, fi := indentOf(s), indentOf(matched[i])
		if _, ok := known[si]; !ok {
			known[si] = fi
		}
		if first || len(si) < len(s0) {
			s0, f0, first = si, fi, false
		}
	}
	if first {
		return replace
	}
	// One level deeper than the base, if SEARCH shows one.
	var sunit int
	var funit string
	for si, fi := range known {
		if len(si) > len(s0) && strings.HasPrefix(si, s0) && strings.HasPrefix(fi, f0) && len(fi) > len(f0) &&
			(sunit == 0 || len(si)-len(s0) < sunit) {
			sunit, funit = len(si)-len(s0), fi[len(f0):]
		}
	}
	out := make([]string, len(replace))
	for i, r := range replace {
		ri := indentOf(r)
		body := r[len(ri):]
		switch fi, ok := known[ri]; {
		case strings.TrimSpace(r) == "":
			out[i] = r
		case ok:
			out[i] = fi + body
		case strings.HasPrefix(ri, s0) && sunit > 0 && (len(ri)-len(s0))%sunit == 0:
			out[i] = f0 + strings.Repeat(funit, (len(ri)-len(s0))/sunit) + body
		case strings.HasPrefix(ri, s0):
			out[i] = f0 + ri[len(s0):] + body
		case len(ri) >= len(s0):
			out[i] = r // indented differently (tabs vs spaces): leave it
		default:
			// Shallower than the base: shift by as much as the file allows.
			out[i] = f0[:max(0, len(f0)-(len(s0)-len(ri)))] + body
		}
	}
	return out
}

// closest finds the region of lines most like search: the window with the
// most equal (whitespace-normalized) lines, or else the line most like the
// first non-blank SEARCH line. It returns [lo, hi) clamped to the file,
// with a line of context on each side.
func closest(lines, search []string) (int, int) {
	if len(lines) == 0 || len(search) == 0 {
		return 0, 0
	}
	index := map[string][]int{}
	for i, l := range lines {
		if k := normalize(l); k != "" {
			index[k] = append(index[k], i)
		}
	}
	score := map[int]int{}
	for j, s := range search {
		k := normalize(s)
		if k == "" || len(index[k]) > 50 { // skip blank and ubiquitous lines ("}")
			continue
		}
		for _, i := range index[k] {
			score[i-j]++
		}
	}
	best, bestScore := 0, 0
	for start, sc := range score {
		if sc > bestScore || sc == bestScore && start < best {
			best, bestScore = start, sc
		}
	}
	if bestScore == 0 {
		anchor, ai := "", 0
		for j, s := range search {
			if strings.TrimSpace(s) != "" {
				anchor, ai = normalize(s), j
				break
			}
		}
		bestSim := 0.0
		for i, l := range lines {
			if sim := similarity(anchor, normalize(l)); sim > bestSim {
				best, bestSim = i-ai, sim
			}
		}
		if bestSim < 0.3 {
			return 0, 0
		}
	}
	lo := max(0, best-1)
	hi := min(len(lines), best+len(search)+1)
	if hi-lo > 40 {
		hi = lo + 40
	}
	return lo, hi
}

// similarity is the Dice coefficient of the two strings' byte bigrams.
func similarity(a, b string) float64 {
	if len(a) < 2 || len(b) < 2 {
		if a == b {
			return 1
		}
		return 0
	}
	if len(a) > 400 {
		a = a[:400]
	}
	if len(b) > 400 {
		b = b[:400]
	}
	grams := map[string]int{}
	for i := 0; i+2 <= len(a); i++ {
		grams[a[i:i+2]]++
	}
	common := 0
	for i := 0; i+2 <= len(b); i++ {
		if grams[b[i:i+2]] > 0 {
			grams[b[i:i+2]]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)-1+len(b)-1)
}

// closestPhrase: "the closest lines are 14-19", "the closest line is 3".
func closestPhrase(lo, hi int) string {
	if hi-lo <= 1 {
		return fmt.Sprintf("the closest line is %d", lo+1)
	}
	return fmt.Sprintf("the closest lines are %d-%d", lo+1, hi)
}

// lineRange names 0-based lines [lo, hi) for people: "line 3", "lines 3-7".
func lineRange(lo, hi int) string {
	if hi-lo <= 1 {
		return fmt.Sprintf("line %d", lo+1)
	}
	return fmt.Sprintf("lines %d-%d", lo+1, hi)
}

func numbered(lines []string, lo, hi int) string {
	var b strings.Builder
	w := len(fmt.Sprint(hi))
	for i := lo; i < hi; i++ {
		fmt.Fprintf(&b, "%*d| %s\n", w, i+1, lines[i])
	}
	return b.String()
}

// pathConflict explains why a new file cannot be created at p: a
// directory there, or a file where p needs a directory.
func pathConflict(snap *sandbox.Snapshot, p string) string {
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if _, ok := snap.Files[dir]; ok {
			return fmt.Sprintf("%s cannot be created: %s is a file, not a directory", p, dir)
		}
	}
	for k := range snap.Files {
		if strings.HasPrefix(k, p+"/") {
			return fmt.Sprintf("%s is a directory, not a file", p)
		}
	}
	return ""
}

// similarPaths lists snapshot paths with the same base name as p.
func similarPaths(snap *sandbox.Snapshot, p string) []string {
	var out []string
	base := path.Base(p)
	for k := range snap.Files {
		if path.Base(k) == base {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}
