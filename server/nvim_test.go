package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// The Go project of TestNeovimE2E is testdata/nvim/gostats: Median returns
// the upper middle value of an even-length sample, so TestMedian fails at
// stats_test.go:10. The scripted model fixes it, and solves the goal
// "add a Mean function" with the function and its test.
const (
	goStatsPlan = "1. TestMedian fails: Median ignores even-length samples.\n2. In stats.go, average the two middle values.\n3. Rerun the tests."
	goStatsFix  = "stats.go\n<<<<<<< SEARCH\n\tmid := len(s) / 2\n\treturn s[mid]\n=======\n\tmid := len(s) / 2\n\tif len(s)%2 == 0 {\n\t\treturn (s[mid-1] + s[mid]) / 2\n\t}\n\treturn s[mid]\n>>>>>>> REPLACE\n"
	goMeanFunc  = "// Mean returns the arithmetic mean of xs.\nfunc Mean(xs []float64) float64 {\n\tvar sum float64\n\tfor _, x := range xs {\n\t\tsum += x\n\t}\n\treturn sum / float64(len(xs))\n}\n\n"
	goMeanTest  = "func TestMean(t *testing.T) {\n\tif got := Mean([]float64{1, 2, 3, 4}); got != 2.5 {\n\t\tt.Errorf(\"Mean = %v, want 2.5\", got)\n\t}\n}\n\n"
	goMedianDoc = "// Median returns the median of xs: the middle value of the sorted sample,\n"
	goMeanSolve = "stats.go\n<<<<<<< SEARCH\n" + goMedianDoc + "=======\n" + goMeanFunc + goMedianDoc + ">>>>>>> REPLACE\n\n" +
		"stats_test.go\n<<<<<<< SEARCH\nfunc TestMedian(t *testing.T) {\n=======\n" + goMeanTest + "func TestMedian(t *testing.T) {\n>>>>>>> REPLACE\n"
	// goStatsFixed is stats.go once fixed (Neovim's buffer text: no final newline).
	goStatsFixed = "// Package stats computes summary statistics of samples.\npackage stats\n\nimport \"sort\"\n\n" +
		"// Median returns the median of xs: the middle value of the sorted sample,\n// or the mean of the two middle values when its length is even.\n" +
		"func Median(xs []float64) float64 {\n\ts := append([]float64(nil), xs...)\n\tsort.Float64s(s)\n\tmid := len(s) / 2\n\tif len(s)%2 == 0 {\n\t\treturn (s[mid-1] + s[mid]) / 2\n\t}\n\treturn s[mid]\n}"
)

// goStatsModel scripts the model for the Go project.
func goStatsModel() *llmtest.Script {
	return &llmtest.Script{
		Rules: []llmtest.Rule{
			{Contains: "## Task: write a plan", Reply: &llmtest.Reply{Content: goStatsPlan}},
			{Contains: "add a Mean function", Last: true, Reply: &llmtest.Reply{Content: goMeanSolve}},
			{Contains: "## Task: write the edits", Reply: &llmtest.Reply{Content: goStatsFix}},
		},
		Default: &llmtest.Reply{Content: demo.CannotHelp},
	}
}

// goStatsProject copies testdata/nvim/gostats to a fresh workspace.
func goStatsProject(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/nvim/gostats")); err != nil {
		t.Fatal(err)
	}
	return root
}

// nvimCase is one project TestNeovimE2E drives; Lua gets the file names
// and the marks to wait for (E2E_CASE, see testdata/nvim/e2e.lua).
type nvimCase struct {
	name    string
	image   string
	project func(testing.TB) string
	model   func() *llmtest.Script
	lua     map[string]string // test_file, src_file, fixed_mark, goal_line, goal, solved_mark

	diagLine   int      // 0-based line of the failing assertion in test_file
	diagHas    []string // substrings of its message
	fixed      string   // src_file's buffer after "Fix until tests pass"
	solved     string   // src_file's buffer after the goal is solved (comment gone)
	solvedTest string   // a substring of test_file's buffer after the goal
}

var nvimCases = []nvimCase{
	{
		name:    "go",
		image:   "fixpoint-sandbox-go",
		project: goStatsProject,
		model:   goStatsModel,
		lua: map[string]string{
			"test_file": "stats_test.go", "src_file": "stats.go", "fixed_mark": "s[mid-1]",
			"goal_line": "// fixpoint: add a Mean function", "goal": "add a Mean function", "solved_mark": "func Mean(",
		},
		diagLine:   9,
		diagHas:    []string{"TestMedian", "Median(even) = 3, want 2.5"},
		fixed:      goStatsFixed,
		solved:     strings.Replace(goStatsFixed, "// Median returns", goMeanFunc+"// Median returns", 1),
		solvedTest: goMeanTest + "func TestMedian(t *testing.T) {",
	},
	{
		name:    "python",
		image:   "fixpoint-sandbox-python",
		project: func(t testing.TB) string { return calcProject(t, false, "") },
		model:   calcModel,
		lua: map[string]string{
			"test_file": "test_calc.py", "src_file": "calc.py", "fixed_mark": "a + b",
			"goal_line": "# fixpoint: add a mul function", "goal": "add a mul function", "solved_mark": "def mul",
		},
		diagLine:   7,
		diagHas:    []string{"test_add"},
		fixed:      "def add(a, b):\n    return a + b",
		solved:     "def mul(a, b):\n    return a * b\n\n\ndef add(a, b):\n    return a + b",
		solvedTest: "class TestMul(unittest.TestCase):",
	},
}

// TestNeovimE2E drives `fixpoint serve` from headless Neovim (0.7.2,
// Debian) with testdata/nvim/e2e.lua, on a Go and a Python project with
// the real Docker sandbox: runTests → diagnostics at the failing
// assertion; code actions there (titles checked); "Fix until tests pass"
// → Neovim's own applyEdit handler changes the buffer; the diagnostics
// clear; then a goal comment typed into the unsaved buffer is solved end
// to end and its line removed.
func TestNeovimE2E(t *testing.T) {
	nvim := sandboxtest.RequireCommand(t, "nvim")
	requireE2E(t)
	cli := sandboxtest.RequireDocker(t)
	bin := fixpointBinary(t)
	for _, tc := range nvimCases {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.RequireImage(t, cli, tc.image)
			testNeovimE2E(t, nvim, bin, tc)
		})
	}
}

func testNeovimE2E(t *testing.T, nvim, bin string, tc nvimCase) {
	model := llmtest.NewServer(tc.model())
	defer model.Close()
	root := tc.project(t)
	outFile := filepath.Join(t.TempDir(), "out.tsv")
	script, _ := filepath.Abs("testdata/nvim/e2e.lua")
	luaCase, _ := json.Marshal(tc.lua)
	ctx, cancel := contextWithTimeout(t, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Dir = root
	// Later entries win in exec.Cmd.Env: the image overrides serveEnv's.
	env := append(serveEnv(t, model.URL()), "FIXPOINT_IMAGE="+tc.image,
		"FIXPOINT_BIN="+bin, "E2E_ROOT="+root, "E2E_OUT="+outFile, "E2E_CASE="+string(luaCase))
	cmd.Env = env
	trustFolder(t, cmd.Env, root)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	out, _ := os.ReadFile(outFile)
	t.Logf("nvim results:\n%s", out)
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	logPath := filepath.Join(home, ".cache", "nvim", "lsp.log")
	if err != nil {
		lspLog, _ := os.ReadFile(logPath)
		t.Fatalf("nvim: %v\n%s\nlsp.log:\n%s", err, stderr.String(), lspLog)
	}
	got := map[string]json.RawMessage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "\t")
		got[k] = json.RawMessage(v)
	}
	if e, ok := got["error"]; ok {
		lspLog, _ := os.ReadFile(logPath)
		t.Fatalf("nvim script failed: %s\nlsp.log (fixpoint serve's stderr):\n%s", e, lspLog)
	}
	var diag struct {
		Lnum    int    `json:"lnum"`
		Source  string `json:"source"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(got["diagnostic"], &diag)
	if diag.Lnum != tc.diagLine || diag.Source != "fixpoint" {
		t.Errorf("diagnostic = %+v, want line %d (0-based), source fixpoint", diag, tc.diagLine)
	}
	for _, s := range tc.diagHas {
		if !strings.Contains(diag.Message, s) {
			t.Errorf("diagnostic message = %q, want it to contain %q", diag.Message, s)
		}
	}
	var titles []string
	_ = json.Unmarshal(got["titles"], &titles)
	// One entry per action: the quickfix stands in for the source action
	// of the same command.
	want := []string{"Fix until tests pass [quickfix]", "Run tests [source.fixpoint.runTests]"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Errorf("code action titles = %q, want %q", titles, want)
	}
	var goalTitles []string
	_ = json.Unmarshal(got["goal_titles"], &goalTitles)
	if len(goalTitles) == 0 || goalTitles[0] != "Solve goal: "+tc.lua["goal"]+" [refactor.rewrite]" {
		t.Errorf("code action titles on the goal comment = %q, want Solve goal: %s [refactor.rewrite] first", goalTitles, tc.lua["goal"])
	}
	var fixed, solved, solvedTest string
	_ = json.Unmarshal(got["fixed"], &fixed)
	_ = json.Unmarshal(got["solved"], &solved)
	_ = json.Unmarshal(got["solved_test"], &solvedTest)
	if fixed != tc.fixed {
		t.Errorf("%s buffer after the fix = %q, want %q", tc.lua["src_file"], fixed, tc.fixed)
	}
	if string(got["cleared"]) != "true" {
		t.Errorf("diagnostics were not cleared")
	}
	if solved != tc.solved {
		t.Errorf("%s buffer after solving the goal = %q, want %q (goal comment removed)", tc.lua["src_file"], solved, tc.solved)
	}
	if !strings.Contains(solvedTest, tc.solvedTest) {
		t.Errorf("%s buffer after solving the goal = %q, want it to contain %q", tc.lua["test_file"], solvedTest, tc.solvedTest)
	}
	if disk, _ := os.ReadFile(filepath.Join(root, tc.lua["src_file"])); strings.Contains(string(disk), tc.lua["fixed_mark"]) {
		t.Errorf("%s on disk changed; only the editor's buffer may change (the user saves)", tc.lua["src_file"])
	}
}

// The table project of TestNeovimPluginE2E (testdata/nvim/gotable): two
// cases of TestMedian fail at stats_test.go:16; the goal "add Mean in
// mean.go" is solved by fixing Median and creating mean.go and its test.
const (
	goTableMean     = "package stats\n\n// Mean returns the arithmetic mean of xs.\nfunc Mean(xs []float64) float64 {\n\tvar sum float64\n\tfor _, x := range xs {\n\t\tsum += x\n\t}\n\treturn sum / float64(len(xs))\n}\n"
	goTableMeanTest = "package stats\n\nimport \"testing\"\n\n" + goMeanTest
	goTableSolve    = goStatsFix + "\nmean.go\n<<<<<<< SEARCH\n=======\n" + goTableMean + ">>>>>>> REPLACE\n" +
		"\nmean_test.go\n<<<<<<< SEARCH\n=======\n" + goTableMeanTest + ">>>>>>> REPLACE\n"
)

func goTableModel() *llmtest.Script {
	return &llmtest.Script{
		Rules: []llmtest.Rule{
			{Contains: "## Task: write a plan", Reply: &llmtest.Reply{Content: "1. Fix Median for even lengths.\n2. Add mean.go with Mean."}},
			{Contains: "add Mean in mean.go", Last: true, Reply: &llmtest.Reply{Content: goTableSolve}},
		},
		Default: &llmtest.Reply{Content: demo.CannotHelp},
	}
}

// TestNeovimPluginE2E drives the real `fixpoint serve` through the shipped
// plugin (editors/nvim) in headless Neovim 0.7.2, with the Docker sandbox
// and the scripted model (testdata/nvim/plugin_e2e.lua): every failing
// table case is its own diagnostic on the shared line; Run Tests ends
// "tests-failing", not "failed"; a verified solve is previewed (the
// confirm hook gets the diff) and, accepted, lands including the file it
// creates, which Neovim 0.7's own client cannot do; the progress is seen
// as statuses, every echoed line fitting the echo area.
func TestNeovimPluginE2E(t *testing.T) {
	nvim := sandboxtest.RequireCommand(t, "nvim")
	requireE2E(t)
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-go")
	bin := fixpointBinary(t)
	model := llmtest.NewServer(goTableModel())
	defer model.Close()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/nvim/gotable")); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(t.TempDir(), "out.tsv")
	script, _ := filepath.Abs("testdata/nvim/plugin_e2e.lua")
	plugin, _ := filepath.Abs("../editors/nvim")
	ctx, cancel := contextWithTimeout(t, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Dir = root
	cmd.Env = append(serveEnv(t, model.URL()), "FIXPOINT_IMAGE=fixpoint-sandbox-go",
		"FIXPOINT_BIN="+bin, "E2E_ROOT="+root, "E2E_OUT="+outFile, "E2E_PLUGIN="+plugin)
	trustFolder(t, cmd.Env, root)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	out, _ := os.ReadFile(outFile)
	t.Logf("nvim results:\n%s", out)
	// fixpoint serve's stderr (FIXPOINT_LOG=debug) is in Neovim's lsp.log
	// under the test's HOME: shown whenever the test fails.
	defer func() {
		if t.Failed() {
			lspLog, _ := os.ReadFile(filepath.Join(envValue(cmd.Env, "HOME"), ".cache", "nvim", "lsp.log"))
			t.Logf("lsp.log (fixpoint serve's stderr):\n%s", lspLog)
		}
	}()
	if err != nil {
		t.Fatalf("nvim: %v\n%s", err, stderr.String())
	}
	got := map[string]json.RawMessage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "\t")
		got[k] = json.RawMessage(v)
	}
	if e, ok := got["error"]; ok {
		t.Fatalf("nvim plugin script failed: %s", e)
	}

	// Every failing case is visible, on the line they share, pointing at the test.
	var diags []struct {
		Lnum    int    `json:"lnum"`
		Message string `json:"message"`
		Related int    `json:"related"`
	}
	_ = json.Unmarshal(got["diagnostics"], &diags)
	if len(diags) != 2 {
		t.Fatalf("diagnostics = %+v, want one per failing case (2)", diags)
	}
	for i, want := range []string{"Median([4 1 3 2]) = 3, want 2.5 (case 1 of 2)", "Median([1 2]) = 2, want 1.5 (case 2 of 2)"} {
		if diags[i].Lnum != 15 || !strings.Contains(diags[i].Message, want) {
			t.Errorf("diagnostic %d = %+v, want line 15 (0-based) with %q", i, diags[i], want)
		}
	}

	var testStatus struct{ State, Text string }
	_ = json.Unmarshal(got["test_status"], &testStatus)
	if testStatus.State != "tests-failing" || testStatus.Text != "fixpoint: 1 failing" { // one test, two cases
		t.Errorf("status after :FixpointTest = %+v, want tests-failing, \"fixpoint: 1 failing\"", testStatus)
	}

	// The preview: the confirm hook saw the files and the diff.
	var confirmed struct {
		Prompt string   `json:"prompt"`
		Lines  []string `json:"lines"`
	}
	_ = json.Unmarshal(got["confirmed"], &confirmed)
	if !strings.HasPrefix(confirmed.Prompt, "Apply mean.go (+10 −0), mean_test.go (+10 −0)") {
		t.Errorf("confirm prompt = %q, want it to start with the files", confirmed.Prompt)
	}
	diff := strings.Join(confirmed.Lines, "\n")
	if !strings.Contains(diff, "files: mean.go (+10 −0), mean_test.go (+10 −0), stats.go (+3 −0)") {
		t.Errorf("preview = %q, want the files with their line counts", diff)
	}
	if !strings.Contains(diff, "+func Mean(xs []float64) float64 {") || !strings.Contains(diff, "verified:") {
		t.Errorf("previewed diff = %q, want the new Mean and the verification", diff)
	}

	// The file-creating result landed in buffers.
	var mean, stats string
	_ = json.Unmarshal(got["mean"], &mean)
	_ = json.Unmarshal(got["stats"], &stats)
	if mean != strings.TrimSuffix(goTableMean, "\n") {
		t.Errorf("mean.go buffer = %q, want %q", mean, goTableMean)
	}
	if !strings.Contains(stats, "return (s[mid-1] + s[mid]) / 2") {
		t.Errorf("stats.go buffer = %q, want the fix", stats)
	}

	// Progress: running statuses with iterations, then applied; one line each.
	var statuses []struct{ State, Text string }
	_ = json.Unmarshal(got["statuses"], &statuses)
	sawIteration := false
	for _, s := range statuses {
		if s.State == "running" && strings.HasPrefix(s.Text, "fixpoint 1/") {
			sawIteration = true
		}
	}
	if !sawIteration || len(statuses) == 0 || statuses[len(statuses)-1].State != "applied" {
		t.Errorf("statuses = %+v, want running ones with the iteration, ending applied", statuses)
	}
	// One status per run: the $/progress the server also sends (Neovim 0.7
	// announces work-done progress) is not echoed a second time.
	var echoed []string
	_ = json.Unmarshal(got["echoed"], &echoed)
	for i, line := range echoed {
		if strings.HasPrefix(line, "fixpoint: Run tests ·") || strings.HasPrefix(line, "fixpoint: Solve goal: add Mean in mean.go ·") {
			t.Errorf("echoed %q: a $/progress begin shown next to the status", line)
		}
		if i > 0 && echoed[i-1] == line {
			t.Errorf("echoed %q twice in a row", line)
		}
	}
	if _, asked := got["message_request"]; asked {
		t.Errorf("the server asked a question during a verified run: %s", got["message_request"])
	}
	if string(got["too_wide"]) != "[]" && string(got["too_wide"]) != "{}" {
		t.Errorf("echoed lines that do not fit the echo area (hit-enter prompt): %s", got["too_wide"])
	}
}

// envValue is the last value of key in env (exec.Cmd.Env: later wins).
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, key+"="); ok {
			v = val
		}
	}
	return v
}

// TestNeovimScreenNoHitEnter runs a real Neovim with the plugin in tmux
// (editors/nvim/capture.sh, with Neovim's default cmdheight of 1, in a
// 24-row pane) on examples/go-bug with the bundled scripted model:
// :FixpointFix opens the plugin's own preview split, which does not block
// Neovim: "G" scrolls it to the diff's end, "a" (a buffer-local key)
// applies. No screen stops at a hit-enter prompt; the preview shows the
// diff and its keys, the scrolled one the diff's end, the final one the
// applied state in the buffer and the status line.
func TestNeovimScreenNoHitEnter(t *testing.T) {
	sandboxtest.RequireCommand(t, "nvim")
	sandboxtest.RequireCommand(t, "tmux")
	requireE2E(t)
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-go")
	bin := fixpointBinary(t)
	dir := t.TempDir()
	final, preview, scrolled := filepath.Join(dir, "final.txt"), filepath.Join(dir, "preview.txt"), filepath.Join(dir, "scrolled.txt")
	ctx, cancel := contextWithTimeout(t, 5*time.Minute)
	defer cancel()
	script, _ := filepath.Abs("../editors/nvim/capture.sh")
	cmd := exec.CommandContext(ctx, "bash", script, final)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FIXPOINT_") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	home := t.TempDir()
	cmd.Env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+home, "FIXPOINT_DATA_DIR="+filepath.Join(home, "data"),
		"FIXPOINT_SANDBOX=docker", "FIXPOINT_IMAGE=fixpoint-sandbox-go", "FIXPOINT_BIN="+bin,
		"FIXPOINT_CAPTURE_KEYS=a", "FIXPOINT_CAPTURE_PREVIEW="+preview, "FIXPOINT_CAPTURE_SCROLL=G", "FIXPOINT_CAPTURE_SCROLLED="+scrolled,
		"FIXPOINT_CAPTURE_ROWS=24", "FIXPOINT_CAPTURE_CMDHEIGHT=1", "FIXPOINT_CAPTURE_TIMEOUT=120")
	out, err := cmd.CombinedOutput()
	screen, _ := os.ReadFile(final)
	shown, _ := os.ReadFile(preview)
	moved, _ := os.ReadFile(scrolled)
	t.Logf("capture.sh:\n%s\npreview screen:\n%s\nscrolled preview:\n%s\nfinal screen:\n%s", out, shown, moved, screen)
	if err != nil {
		t.Fatalf("capture.sh: %v", err)
	}
	for name, s := range map[string]string{"preview": string(shown), "scrolled": string(moved), "final": string(screen)} {
		if strings.Contains(s, "Press ENTER") {
			t.Errorf("the %s screen stops at a hit-enter prompt", name)
		}
	}
	if !strings.Contains(string(shown), "a: Apply   q: Cancel") || !strings.Contains(string(shown), "files: stats/stats.go") {
		t.Errorf("the preview screen shows no diff header and Apply/Cancel keys")
	}
	// Scrolled: the header went off the top, the keys are still there, and
	// the diff's last line is on screen.
	if strings.Contains(string(moved), "files: stats/stats.go") || !strings.Contains(string(moved), "a: Apply   q: Cancel") {
		t.Errorf("the preview did not scroll (G): the header is still shown, or the keys are gone")
	}
	if !strings.Contains(string(moved), "return s[mid], nil") {
		t.Errorf("the scrolled preview does not show the end of the diff")
	}
	if !strings.Contains(string(screen), "fixpoint: applied") || !strings.Contains(string(screen), "return (s[mid-1] + s[mid]) / 2, nil") {
		t.Errorf("the final screen does not show the applied fix in the buffer and the status line")
	}
}

// TestNeovimFirstRun is a first-time user's :FixpointFix in a real Neovim
// in tmux (editors/nvim/capture.sh, cmdheight 1): no model configured and
// no Docker engine. The screen shows both notices whole (the demo-model
// banner with where the key goes, the no-Docker notice with the fix for
// the user's system) in the plugin's notice window, and no hit-enter
// prompt.
func TestNeovimFirstRun(t *testing.T) {
	sandboxtest.RequireCommand(t, "nvim")
	sandboxtest.RequireCommand(t, "tmux")
	sandboxtest.RequireCommand(t, "bwrap")
	bin := fixpointBinary(t)
	screen := filepath.Join(t.TempDir(), "screen.txt")
	ctx, cancel := contextWithTimeout(t, 5*time.Minute)
	defer cancel()
	script, _ := filepath.Abs("../editors/nvim/capture.sh")
	cmd := exec.CommandContext(ctx, "bash", script, screen)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FIXPOINT_") && !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "DOCKER_HOST=") {
			env = append(env, kv)
		}
	}
	home := t.TempDir()
	cmd.Env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+home, "FIXPOINT_DATA_DIR="+filepath.Join(home, "data"),
		"DOCKER_HOST=unix:///nonexistent/docker.sock", "FIXPOINT_BIN="+bin, "FIXPOINT_CAPTURE_NOMODEL=1",
		"FIXPOINT_CAPTURE_UNTIL=no model configured\nno Docker engine answers", "FIXPOINT_CAPTURE_CMDHEIGHT=1", "FIXPOINT_CAPTURE_TIMEOUT=120")
	out, err := cmd.CombinedOutput()
	shown, _ := os.ReadFile(screen)
	t.Logf("capture.sh:\n%s\nscreen:\n%s", out, shown)
	if err != nil {
		t.Fatalf("capture.sh: %v", err)
	}
	s := string(shown)
	if strings.Contains(s, "Press ENTER") {
		t.Errorf("the screen stops at a hit-enter prompt")
	}
	for _, want := range []string{"no model configured: running the bundled", "FIXPOINT_API_KEY", "no Docker engine answers", "apt-get install docker.io"} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen does not show %q", want)
		}
	}
}
