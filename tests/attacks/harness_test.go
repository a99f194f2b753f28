package attacks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
)

// binary is bin/fixpoint built by TestMain into a temporary directory.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fixpoint-attacks-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "fixpoint")
	build := exec.Command("go", "build", "-o", binary, "github.com/fixpoint-dev/fixpoint/cmd/fixpoint")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "attacks: go build ./cmd/fixpoint:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	reportTable()
	os.Exit(code)
}

// reportMode is FIXPOINT_ATTACKS_REPORT=1: every case runs, breaches are
// logged and tabulated at the end instead of failing the test.
func reportMode() bool { return os.Getenv("FIXPOINT_ATTACKS_REPORT") == "1" }

var (
	tableMu sync.Mutex
	table   = map[string]string{} // case/backend -> "held" or "BROKEN: ..."
)

func record(name, result string) {
	tableMu.Lock()
	defer tableMu.Unlock()
	table[name] = result
}

func reportTable() {
	if !reportMode() || len(table) == 0 {
		return
	}
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	held := 0
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-62s %s\n", "case/backend", "result")
	for _, n := range names {
		if table[n] == "held" {
			held++
		}
		fmt.Fprintf(&b, "%-62s %s\n", n, table[n])
	}
	fmt.Fprintf(&b, "held %d of %d\n", held, len(names))
	os.Stdout.WriteString(b.String())
	if f := os.Getenv("FIXPOINT_ATTACKS_TABLE"); f != "" {
		os.WriteFile(f, []byte(b.String()), 0o644)
	}
}

func TestAttacks(t *testing.T) {
	cases, err := loadCases("tuning", "heldout")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases under tuning/ or heldout/")
	}
	for _, c := range cases {
		for _, backend := range c.Backends {
			t.Run(c.Name+"/"+backend, func(t *testing.T) {
				requireBackend(t, backend)
				t.Parallel()
				runCase(t, c, backend)
			})
		}
	}
}

var (
	backendOnce sync.Map // backend -> *backendState
)

type backendState struct {
	once sync.Once
	err  error
}

// requireBackend skips (fails under CI=true) when backend cannot run here.
func requireBackend(t *testing.T, backend string) {
	v, _ := backendOnce.LoadOrStore(backend, &backendState{})
	st := v.(*backendState)
	st.once.Do(func() { st.err = probeBackend(backend) })
	if st.err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("backend %s unavailable under CI=true: %v", backend, st.err)
	}
	t.Skipf("backend %s unavailable: %v", backend, st.err)
}

func probeBackend(backend string) error {
	switch backend {
	case "bwrap":
		if _, err := exec.LookPath("bwrap"); err != nil {
			return err
		}
		out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-all", "true").CombinedOutput()
		if err != nil {
			return fmt.Errorf("bwrap cannot create namespaces: %v: %s", err, out)
		}
		return nil
	case "docker":
		if out, err := exec.Command("docker", "version").CombinedOutput(); err != nil {
			return fmt.Errorf("docker version: %v: %s", err, lastLine(out))
		}
		out, err := exec.Command("docker", "images", "--format", "{{.Repository}}").Output()
		if err != nil {
			return fmt.Errorf("docker images: %v", err)
		}
		if !bytes.Contains(out, []byte("fixpoint-sandbox-")) {
			return fmt.Errorf("no fixpoint-sandbox-* image (run fixpoint sandbox images build)")
		}
		return nil
	}
	return fmt.Errorf("unknown backend %q", backend)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// env is one case run's world: directories, servers, canary.
type env struct {
	t         *testing.T
	c         *Case
	backend   string
	ws        string // the workspace
	home      string // HOME; XDG dirs inside
	mark      string // host directory the attack tries to write into; must stay empty
	outside   string // host directory with victim.txt; must stay unchanged
	canary    string
	llm       *llmtest.Server
	attacker  *attacker
	model     string
	runs      []runResult
	reqMarks  []int // number of scripted-server requests before each step
	subst     *strings.Replacer
	secretsIn []string // secrets plus their encodings
}

type runResult struct {
	step     step
	args     []string
	code     int
	stdout   []byte
	stderr   []byte
	lsp      *lspTranscript // serve steps
	timedOut bool
}

func (e *env) dataDir() string { return filepath.Join(e.home, ".local", "share", "fixpoint") }

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// workspaceDir is a path stable across runs of the suite (so the per-project
// build caches fixpoint keeps on the host are reused), unless the case asks
// for a fresh one.
func workspaceDir(t *testing.T, c *Case, backend string) string {
	if c.Fresh {
		return filepath.Join(t.TempDir(), "ws")
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-attacks-%d", os.Getuid()),
		backend, strings.ReplaceAll(c.Name, "/", "_"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "ws")
}

func runCase(t *testing.T, c *Case, backend string) {
	e := &env{t: t, c: c, backend: backend, model: "attack-user-model"}
	e.canary = "sk-attack-CANARY-" + randHex(12)
	root := t.TempDir()
	e.home = filepath.Join(root, "home")
	e.mark = filepath.Join(root, "mark")
	e.outside = filepath.Join(root, "outside")
	e.ws = workspaceDir(t, c, backend)
	for _, d := range []string{e.home, e.mark, e.outside, e.ws} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(e.outside, "victim.txt"), []byte("victim file outside the workspace\n"), 0o644))

	e.attacker = startAttacker(t)
	script := &llmtest.Script{Default: &llmtest.Reply{Content: "I have no further changes to propose."}}
	e.llm = llmtest.NewServer(script)
	t.Cleanup(e.llm.Close)

	e.subst = strings.NewReplacer(
		"{{ATTACKER_URL}}", e.attacker.url,
		"{{ATTACKER_BRIDGE_URL}}", e.attacker.bridgeURL,
		"{{ATTACKER_HOSTPORT}}", strings.TrimPrefix(e.attacker.url, "http://"),
		"{{MARK}}", e.mark,
		"{{OUTSIDE}}", e.outside,
		"{{HOME}}", e.home,
		"{{WS}}", e.ws,
		"{{ESC}}", "\x1b",
		"{{BEL}}", "\x07",
		"{{CSI}}", "\u009b",
		"{{CR}}", "\r",
		"{{BS}}", "\b",
	)
	for _, r := range c.Replies {
		e.llm.Push(llmtest.Reply{Content: e.subst.Replace(r)})
	}
	e.layout()
	e.secretsIn = encodings(c.Secrets)

	before := hashTree(t, e.ws)
	protBefore := e.hashProtected()
	outsideBefore := hashTree(t, e.outside)

	for _, s := range c.Steps {
		e.reqMarks = append(e.reqMarks, len(e.llm.Requests()))
		var r runResult
		switch s.Mode {
		case "serve":
			r = e.serve(s)
		case "listen":
			r = e.listen(s)
		default:
			r = e.cli(s)
		}
		e.runs = append(e.runs, r)
		t.Logf("step %s %v: exit %d\nstdout:\n%s\nstderr (last 3000 bytes):\n%s", s.Mode, r.args, r.code, clip(r.stdout, 6000), tail(r.stderr, 3000))
	}
	post := e.inspectionOutputs()
	if os.Getenv("FIXPOINT_ATTACKS_DEBUG") == "1" {
		for _, r := range e.llm.Requests() {
			var b strings.Builder
			for _, m := range r.Messages {
				fmt.Fprintf(&b, "[%s] %s\n", m.Role, clip([]byte(m.Content), 2500))
			}
			t.Logf("model request %d %s model=%s:\n%s", r.N, r.Path, r.Model, b.String())
		}
		for i, r := range e.runs {
			if r.lsp != nil {
				t.Logf("step %d LSP messages:\n%s", i+1, clip(r.lsp.raw.Bytes(), 8000))
			}
		}
		for _, a := range e.attacker.requests() {
			t.Logf("attacker request: %.500q", a)
		}
	}

	var breaches []string
	breach := func(inv, format string, args ...any) {
		breaches = append(breaches, inv+": "+fmt.Sprintf(format, args...))
	}
	e.check(breach, before, protBefore, outsideBefore, post)

	var known []string
	kept := breaches[:0]
	for _, b := range breaches {
		inv, _, _ := strings.Cut(b, ":")
		if why := residualReason(c.Name, inv); why != "" {
			known = append(known, b)
			t.Logf("RESIDUAL %s (known: %s)", b, why)
			continue
		}
		kept = append(kept, b)
	}
	breaches = kept
	if len(breaches) == 0 {
		if len(known) > 0 {
			record(c.Name+"/"+backend, "RESIDUAL: "+firstWords(known))
			return
		}
		record(c.Name+"/"+backend, "held")
		return
	}
	record(c.Name+"/"+backend, "BROKEN: "+firstWords(breaches))
	for _, b := range breaches {
		if reportMode() {
			t.Logf("BREACH %s", b)
		} else {
			t.Errorf("BREACH %s", b)
		}
	}
}

func firstWords(bs []string) string {
	seen := map[string]bool{}
	var out []string
	for _, b := range bs {
		inv, _, _ := strings.Cut(b, ":")
		if !seen[inv] {
			seen[inv] = true
			out = append(out, inv)
		}
	}
	return strings.Join(out, ", ")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + fmt.Sprintf("\n... (%d more bytes)", len(b)-n)
	}
	return string(b)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		return "..." + string(b[len(b)-n:])
	}
	return string(b)
}

// layout writes the workspace files, the symlinks, the user config, and
// commits the workspace to a fresh git repository.
func (e *env) layout() {
	t := e.t
	for _, f := range e.c.Files {
		p := filepath.Join(e.ws, filepath.FromSlash(e.subst.Replace(f.Name)))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		mode := os.FileMode(0o644)
		if strings.HasSuffix(f.Name, ".sh") {
			mode = 0o755
		}
		must(t, os.WriteFile(p, []byte(e.subst.Replace(string(f.Data))), mode))
	}
	for _, x := range e.c.Exec {
		must(t, os.Chmod(filepath.Join(e.ws, filepath.FromSlash(x)), 0o755))
	}
	for _, s := range e.c.Symlinks {
		p := filepath.Join(e.ws, filepath.FromSlash(e.subst.Replace(s[0])))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.Symlink(e.subst.Replace(s[1]), p))
	}
	conf := fmt.Sprintf("[model]\nbase_url = %q\nname = %q\n\n[sandbox]\nbackend = %q\n", e.llm.URL(), e.model, e.backend)
	if e.c.UserConf != "" {
		// [sandbox] is the harness's last table: a case's own [sandbox]
		// keys continue it.
		conf += strings.TrimPrefix(e.subst.Replace(e.c.UserConf), "[sandbox]\n")
	}
	cdir := filepath.Join(e.home, ".config", "fixpoint")
	must(t, os.MkdirAll(cdir, 0o755))
	must(t, os.WriteFile(filepath.Join(cdir, "config.toml"), []byte(conf), 0o644))
	if e.c.NoGit {
		return
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=attacks", "GIT_AUTHOR_EMAIL=attacks@example.invalid",
			"GIT_COMMITTER_NAME=attacks", "GIT_COMMITTER_EMAIL=attacks@example.invalid",
			"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	for _, kv := range e.c.GitConf {
		git("config", kv[0], e.subst.Replace(kv[1]))
	}
	git("add", "-A")
	git("commit", "-q", "-m", "hostile repository")
}

// baseEnv is the environment of every fixpoint process: a user who keeps
// the key in the environment and the endpoint, model and backend in the
// user config file.
func (e *env) baseEnv() []string {
	var dirs []string // the go that built fixpoint here, and rustup's cargo (~/.cargo/bin)
	for _, tool := range []string{"go", "cargo"} {
		if p, err := exec.LookPath(tool); err == nil {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	path := strings.Join(append(dirs, "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"), ":")
	ev := []string{
		"PATH=" + path,
		"HOME=" + e.home,
		"XDG_CONFIG_HOME=" + filepath.Join(e.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(e.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(e.home, ".cache"),
		"FIXPOINT_API_KEY=" + e.canary,
		"LANG=C.UTF-8",
		"TERM=dumb",
	}
	for _, k := range []string{"DOCKER_HOST", "DOCKER_CONFIG", "TMPDIR", "GOMODCACHE", "GOPROXY", "GOFLAGS"} {
		if v, ok := os.LookupEnv(k); ok {
			ev = append(ev, k+"="+v)
		}
	}
	if _, ok := os.LookupEnv("GOMODCACHE"); !ok {
		if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
			ev = append(ev, "GOMODCACHE="+strings.TrimSpace(string(out)))
		}
	}
	for _, kv := range e.c.Env {
		ev = append(ev, e.subst.Replace(kv))
	}
	return ev
}

// maxIter is the iteration budget of a fix or solve step.
func (e *env) maxIter() int {
	if e.c.Iter > 0 {
		return e.c.Iter
	}
	llmSteps := 0
	for _, s := range e.c.Steps {
		if s.Mode != "test" {
			llmSteps++
		}
	}
	if n := len(e.c.Replies); n > 0 && llmSteps <= 1 {
		return n
	}
	return 1
}

func (e *env) cli(s step) runResult {
	args := []string{s.Mode, "--dir", e.ws}
	switch s.Mode {
	case "fix", "solve":
		args = append(args, "--max-iterations", fmt.Sprint(e.maxIter()))
	}
	for _, a := range append(append([]string(nil), e.c.Args...), s.Args...) {
		args = append(args, e.subst.Replace(a))
	}
	if s.Mode == "solve" {
		args = append(args, e.subst.Replace(e.c.Goal))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = e.ws
	cmd.Env = e.baseEnv()
	cmd.Stdin = nil // /dev/null: not a terminal, so nothing can be approved
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	r := runResult{step: s, args: args, stdout: stdout.Bytes(), stderr: stderr.Bytes(), code: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		r.timedOut = true
	}
	if err != nil && cmd.ProcessState == nil {
		e.t.Fatalf("run fixpoint %v: %v", args, err)
	}
	return r
}

// inspectionOutputs runs the commands that print stored text back to a
// terminal (history, history show, memory list, memory show) and returns
// their outputs, for the control-byte and secret checks.
func (e *env) inspectionOutputs() map[string][]byte {
	out := map[string][]byte{}
	run := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, args...)
		cmd.Dir = e.ws
		cmd.Env = e.baseEnv()
		b, _ := cmd.CombinedOutput()
		out[strings.Join(args, " ")] = b
		return b
	}
	run("history")
	for _, id := range runIDs(e.dataDir()) {
		run("history", "show", id)
	}
	run("memory", "list", "--dir", e.ws)
	for _, id := range memoryIDs(run("memory", "export", "--dir", e.ws, "-")) {
		run("memory", "show", "--dir", e.ws, id)
	}
	return out
}

// attacker is the attacker's HTTP endpoint: any request it receives is a
// breach (a redirected model call, an exfiltration, a download).
type attacker struct {
	url       string // on 127.0.0.1
	bridgeURL string // on the docker bridge's address when there is one, else url
	mu        sync.Mutex
	reqs      []string
}

func startAttacker(t *testing.T) *attacker {
	a := &attacker{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var hdr strings.Builder
		r.Header.Write(&hdr)
		a.mu.Lock()
		a.reqs = append(a.reqs, fmt.Sprintf("%s %s\n%s\n%s", r.Method, r.URL, hdr.String(), body))
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"error":{"message":"attacker endpoint"}}`)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	a.url = "http://" + ln.Addr().String()
	a.bridgeURL = a.url
	if ip := bridgeIP(); ip != "" {
		if ln2, err := net.Listen("tcp", net.JoinHostPort(ip, "0")); err == nil {
			srv2 := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			go srv2.Serve(ln2)
			a.bridgeURL = "http://" + ln2.Addr().String()
			t.Cleanup(func() { srv2.Close() })
		}
	}
	t.Cleanup(func() { srv.Close() })
	return a
}

func (a *attacker) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.reqs...)
}

// bridgeIP is the host's address on docker0, which a container on the
// default bridge reaches; "" without one.
func bridgeIP() string {
	ifc, err := net.InterfaceByName("docker0")
	if err != nil {
		return ""
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}
