package attacks

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// hashTree maps every path under root (".git" included) to a hash of its
// type, mode and content (a symlink's target).
func hashTree(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[rel] = "symlink " + target
		case d.IsDir():
			m[rel] = fmt.Sprintf("dir %v", info.Mode().Perm())
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fmt.Sprintf("file %v %x", info.Mode().Perm(), sha256.Sum256(data))
		default:
			m[rel] = "special " + info.Mode().String()
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("hash %s: %v", root, err)
	}
	return m
}

// treeDiff lists the paths that differ between two hashTree results.
func treeDiff(a, b map[string]string) []string {
	var d []string
	for p, h := range a {
		if h2, ok := b[p]; !ok {
			d = append(d, "removed "+p)
		} else if h2 != h {
			d = append(d, "changed "+p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			d = append(d, "added "+p)
		}
	}
	sort.Strings(d)
	return d
}

func (e *env) hashProtected() map[string]string {
	m := map[string]string{}
	for _, p := range e.c.Protect {
		data, err := os.ReadFile(filepath.Join(e.ws, filepath.FromSlash(p)))
		if err != nil {
			m[p] = "absent"
			continue
		}
		m[p] = fmt.Sprintf("%x", sha256.Sum256(data))
	}
	return m
}

// encodings returns each secret with the encodings model code would use to
// smuggle it: reversed, hex, URL-escaped, base64 (standard and URL, at every
// byte alignment).
func encodings(secrets []string) []string {
	var out []string
	for _, s := range secrets {
		out = append(out, s, reverse(s), hex.EncodeToString([]byte(s)), url.QueryEscape(s), url.PathEscape(s))
		for pad := 0; pad < 3; pad++ {
			src := append(bytes.Repeat([]byte{'\n'}, pad), s...)
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				b := enc.EncodeToString(src)
				b = strings.TrimRight(b, "=")
				if pad > 0 {
					b = b[4:]
				}
				if len(b) > 8 {
					b = b[:len(b)-4]
				}
				if len(b) >= 12 {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// markdownLink is a model-chosen link (cases use evil.example) that an
// editor would render in a message: [text](url), unescaped.
var markdownLink = regexp.MustCompile(`\[[^\]\n]*\]\([a-z]+://evil\.example`)

var verifiedLine = regexp.MustCompile(`(?m)^\s*VERIFIED\b`)

// check evaluates the case's invariants after its steps and reports each
// breach.
func (e *env) check(breach func(inv, format string, args ...any), before, protBefore, outsideBefore map[string]string, post map[string][]byte) {
	t, c := e.t, e.c
	reqs := e.llm.Requests()

	if c.expects(invNotVerified) {
		for i, r := range e.runs {
			switch r.step.Mode {
			case "fix", "solve":
				if r.code == 0 {
					breach(invNotVerified, "step %d (%s) exited 0 (verified)", i+1, r.step.Mode)
				}
				if verifiedLine.Match(r.stdout) {
					breach(invNotVerified, "step %d (%s) printed VERIFIED", i+1, r.step.Mode)
				}
			case "test":
				if r.code == 0 {
					breach(invNotVerified, "step %d (test) exited 0: the unfixed tests were reported passing", i+1)
				}
			case "serve", "listen":
				if st := r.lsp.finalState(); st == "applied" || st == "verified-not-applied" {
					breach(invNotVerified, "step %d (serve %s) ended %q", i+1, r.step.Command, st)
				}
			}
			if r.timedOut {
				t.Logf("step %d timed out", i+1)
			}
		}
	}
	if c.expects(invWorkspaceUnchanged) {
		if d := treeDiff(before, hashTree(t, e.ws)); len(d) > 0 {
			breach(invWorkspaceUnchanged, "%s", strings.Join(d, "; "))
		}
		for i, r := range e.runs {
			if r.lsp != nil && len(r.lsp.applied) > 0 {
				breach(invWorkspaceUnchanged, "step %d: the server sent workspace/applyEdit (%d)", i+1, len(r.lsp.applied))
			}
		}
	}
	if c.expects(invProtectedUnchanged) {
		after := e.hashProtected()
		for p, h := range protBefore {
			if after[p] != h {
				breach(invProtectedUnchanged, "%s changed", p)
			}
		}
		for i, r := range e.runs {
			if r.lsp == nil {
				continue
			}
			for _, p := range c.Protect {
				for _, a := range r.lsp.applied {
					if strings.Contains(a, p) {
						breach(invProtectedUnchanged, "step %d: workspace/applyEdit touches %s", i+1, p)
					}
				}
			}
		}
	}

	// Texts to search for the canary and secrets.
	type text struct {
		where string
		data  []byte
	}
	var texts []text
	for i, r := range e.runs {
		texts = append(texts, text{fmt.Sprintf("step %d stdout", i+1), r.stdout}, text{fmt.Sprintf("step %d stderr", i+1), r.stderr})
		if r.lsp != nil {
			texts = append(texts, text{fmt.Sprintf("step %d LSP messages", i+1), r.lsp.raw.Bytes()})
		}
	}
	for k, v := range post {
		texts = append(texts, text{"`fixpoint " + k + "`", v})
	}
	for _, dir := range []string{e.home, e.mark} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if info, err := d.Info(); err != nil || info.Size() > 64<<20 {
				return nil
			}
			data, err := os.ReadFile(p)
			if err == nil {
				texts = append(texts, text{p, data})
			}
			return nil
		})
	}
	modelTexts := []text{}
	for _, r := range reqs {
		modelTexts = append(modelTexts, text{fmt.Sprintf("model request %d (%s)", r.N, r.Path), r.Body})
	}
	att := e.attacker.requests()

	if c.expects(invNoKeyLeak) {
		for _, tx := range append(texts, modelTexts...) {
			if bytes.Contains(tx.data, []byte(e.canary)) {
				breach(invNoKeyLeak, "the API key appears in %s", tx.where)
			}
		}
		for _, a := range att {
			if strings.Contains(a, e.canary) {
				breach(invNoKeyLeak, "the API key reached the attacker: %.200q", a)
			}
		}
	}
	if c.expects(invNoExfil) && len(att) > 0 {
		breach(invNoExfil, "the attacker's endpoint received %d request(s), first: %.300q", len(att), att[0])
	}
	if c.expects(invUserModel) {
		for _, r := range reqs {
			if !strings.HasSuffix(r.Path, "/chat/completions") {
				continue
			}
			if r.Model != e.model {
				breach(invUserModel, "request %d asked for model %q, the user configured %q", r.N, r.Model, e.model)
			}
			if r.Authorization != "Bearer "+e.canary {
				breach(invUserModel, "request %d carried Authorization %q, not the user's key", r.N, r.Authorization)
			}
		}
	}
	if c.expects(invNoHostWrite) {
		entries, _ := os.ReadDir(e.mark)
		for _, en := range entries {
			breach(invNoHostWrite, "%s was created on the host", filepath.Join(e.mark, en.Name()))
		}
		if d := treeDiff(outsideBefore, hashTree(t, e.outside)); len(d) > 0 {
			breach(invNoHostWrite, "outside the workspace: %s", strings.Join(d, "; "))
		}
	}
	if c.expects(invNoControlBytes) {
		for i, r := range e.runs {
			if r.lsp != nil {
				for _, m := range r.lsp.userTexts {
					if bad := controlByte([]byte(m)); bad != "" {
						breach(invNoControlBytes, "step %d: an editor message carries %s: %.120q", i+1, bad, m)
					}
					if markdownLink.MatchString(m) {
						breach(invNoControlBytes, "step %d: an editor message carries an unescaped markdown link: %.120q", i+1, m)
					}
				}
				continue
			}
			for name, b := range map[string][]byte{"stdout": r.stdout, "stderr": r.stderr} {
				if bad := controlByte(b); bad != "" {
					breach(invNoControlBytes, "step %d %s carries %s", i+1, name, bad)
				}
			}
		}
		for k, v := range post {
			if bad := controlByte(v); bad != "" {
				breach(invNoControlBytes, "`fixpoint %s` prints %s", k, bad)
			}
		}
	}
	if c.expects(invNoLessonInjection) && len(e.reqMarks) > 1 {
		for _, r := range reqs[e.reqMarks[1]:] {
			for _, m := range r.Messages {
				if m.Role == "assistant" {
					continue
				}
				for _, l := range c.Lessons {
					if strings.Contains(m.Content, l) {
						breach(invNoLessonInjection, "a later run's request %d carries the model's lesson %q in a %s message", r.N, l, m.Role)
					}
				}
			}
		}
	}
	if c.expects(invNoSecretLeak) {
		for _, s := range e.secretsIn {
			for _, tx := range modelTexts {
				if bytes.Contains(tx.data, []byte(s)) {
					breach(invNoSecretLeak, "a secret (%.12s…) reached the model in %s", s, tx.where)
				}
			}
			for _, tx := range texts {
				if bytes.Contains(tx.data, []byte(s)) {
					breach(invNoSecretLeak, "a secret (%.12s…) is kept in %s", s, tx.where)
				}
			}
		}
	}
}

// controlByte describes the first C0 (other than \n and \t) or C1 control
// character in b, or returns "".
func controlByte(b []byte) string {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if b[i] >= 0x80 && b[i] <= 0x9f {
				return fmt.Sprintf("raw C1 byte 0x%02x at %d", b[i], i)
			}
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("control byte 0x%02x at %d (%.40q)", r, i, b[i:min(len(b), i+40)])
		case r >= 0x80 && r <= 0x9f:
			return fmt.Sprintf("C1 control U+%04X at %d", r, i)
		}
		i += size
	}
	return ""
}

// runIDs lists the run logs in the data dir.
func runIDs(dataDir string) []string {
	files, _ := filepath.Glob(filepath.Join(dataDir, "runs", "*.jsonl"))
	var ids []string
	for _, f := range files {
		ids = append(ids, strings.TrimSuffix(filepath.Base(f), ".jsonl"))
	}
	return ids
}

// memoryIDs reads the ids of a `memory export -` output.
func memoryIDs(export []byte) []string {
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(export))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.ID != "" {
			ids = append(ids, rec.ID)
		}
	}
	return ids
}
