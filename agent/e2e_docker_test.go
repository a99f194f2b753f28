package agent

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// e2eCase is one end-to-end run in the real Docker sandbox with a scripted
// model served over HTTP (agent/llmtest) and the real client (agent/llm).
type e2eCase struct {
	name, dir, image string
	mode             Mode
	goal             string
	prep             map[string]string // files written into the copy first
	code             string            // the scripted edit reply
	wantChanged      []string
	wantNewTests     int
}

const (
	pyFix   = "textkit/chunks.py\n<<<<<<< SEARCH\n    for i in range(0, len(seq) - size + 1, size):\n=======\n    for i in range(0, len(seq), size):\n>>>>>>> REPLACE\n"
	nodeFix = "src/clamp.js\n<<<<<<< SEARCH\n  return Math.max(lo, Math.min(x, lo));\n=======\n  return Math.max(lo, Math.min(x, hi));\n>>>>>>> REPLACE\n"
)

var e2eCases = []e2eCase{
	{name: "go fix", dir: goBugDir, image: "fixpoint-sandbox-go", mode: ModeFix, code: demo.GoBugFix, wantChanged: []string{"stats/stats.go"}},
	{name: "go solve", dir: goBugDir, image: "fixpoint-sandbox-go", mode: ModeSolve,
		goal: "Add Mode(xs) returning the most frequent value (ties: smallest).",
		prep: map[string]string{"stats/stats.go": strings.Replace(mustReadFile(goBugDir+"/stats/stats.go"), "\treturn s[mid], nil\n}", "\tif len(s)%2 == 0 {\n\t\treturn (s[mid-1] + s[mid]) / 2, nil\n\t}\n\treturn s[mid], nil\n}", 1)},
		code: goSolveReply, wantChanged: []string{"stats/mode.go", "stats/mode_test.go"}, wantNewTests: 2},
	{name: "python fix", dir: "testdata/py-bug", image: "fixpoint-sandbox-python", mode: ModeFix, code: pyFix, wantChanged: []string{"textkit/chunks.py"}},
	{name: "python solve", dir: "testdata/py-bug", image: "fixpoint-sandbox-python", mode: ModeSolve,
		goal: "Add textkit.words.count_words(text) counting whitespace-separated words.",
		prep: map[string]string{"textkit/chunks.py": "def chunk(seq, size):\n    if size <= 0:\n        raise ValueError(\"size must be positive\")\n    return [list(seq[i:i + size]) for i in range(0, len(seq), size)]\n"},
		code: "textkit/words.py\n<<<<<<< SEARCH\n=======\ndef count_words(text):\n    \"\"\"Count whitespace-separated words.\"\"\"\n    return len(text.split())\n>>>>>>> REPLACE\n\n" +
			"tests/test_words.py\n<<<<<<< SEARCH\n=======\nimport unittest\n\nfrom textkit.words import count_words\n\n\nclass WordsTest(unittest.TestCase):\n    def test_simple(self):\n        self.assertEqual(count_words(\"a b  c\"), 3)\n\n    def test_empty(self):\n        self.assertEqual(count_words(\"\"), 0)\n        self.assertEqual(count_words(\"  \\n\\t\"), 0)\n\n    def test_many(self):\n        for n in range(50):\n            self.assertEqual(count_words(\" \".join([\"w\"] * n)), n)\n>>>>>>> REPLACE\n",
		wantChanged: []string{"tests/test_words.py", "textkit/words.py"}, wantNewTests: 3},
	{name: "node fix", dir: "testdata/node-bug", image: "fixpoint-sandbox-node", mode: ModeFix, code: nodeFix, wantChanged: []string{"src/clamp.js"}},
	{name: "node solve", dir: "testdata/node-bug", image: "fixpoint-sandbox-node", mode: ModeSolve,
		goal: "Add sum(xs) in src/sum.js returning the sum of an array of numbers (0 for empty).",
		prep: map[string]string{"src/clamp.js": "'use strict';\n\nfunction clamp(x, lo, hi) {\n  if (lo > hi) {\n    throw new RangeError('lo must not exceed hi');\n  }\n  return Math.max(lo, Math.min(x, hi));\n}\n\nmodule.exports = { clamp };\n"},
		code: "src/sum.js\n<<<<<<< SEARCH\n=======\n'use strict';\n\nfunction sum(xs) {\n  return xs.reduce((a, b) => a + b, 0);\n}\n\nmodule.exports = { sum };\n>>>>>>> REPLACE\n\n" +
			"test/sum.test.js\n<<<<<<< SEARCH\n=======\n'use strict';\n\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('../src/sum');\n\ntest('sum of numbers', () => {\n  assert.strictEqual(sum([1, 2, 3]), 6);\n});\n\ntest('empty is zero', () => {\n  assert.strictEqual(sum([]), 0);\n});\n\ntest('order does not matter', () => {\n  for (let n = 0; n < 20; n++) {\n    const xs = Array.from({ length: n }, (_, i) => i * 3 - 7);\n    assert.strictEqual(sum(xs), sum([...xs].reverse()));\n  }\n});\n>>>>>>> REPLACE\n",
		wantChanged: []string{"src/sum.js", "test/sum.test.js"}, wantNewTests: 3},
}

// TestE2EDocker runs every example project in fix and solve mode against
// the real Docker engine (required under CI=true).
func TestE2EDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Docker sandbox")
	}
	cli := sandboxtest.RequireDocker(t)
	cfg := testConfig(t)
	cfg.Sandbox.Backend = "docker"
	be, err := backends.Open(t.Context(), cfg, &backends.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer be.(io.Closer).Close()
	for _, tc := range e2eCases {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.RequireImage(t, cli, tc.image)
			root := copyTree(t, tc.dir)
			for p, c := range tc.prep {
				os.WriteFile(filepath.Join(root, p), []byte(c), 0o644)
			}
			srv := llmtest.NewServer(&llmtest.Script{Rules: []llmtest.Rule{
				{Role: "user", Last: true, Contains: markCode, Reply: &llmtest.Reply{Content: tc.code}},
			}})
			defer srv.Close()
			no := false
			mcfg := cfg.Model
			mcfg.BaseURL, mcfg.Name, mcfg.Tools = srv.URL(), "scripted", &no
			e := New(cfg, &Options{Model: llm.New(mcfg, nil), Backend: be})
			defer e.Close()
			res, err := e.Run(t.Context(), Request{Mode: tc.mode, Root: root, Goal: tc.goal}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verified {
				t.Fatalf("Verified = false: %s\nfinal: %+v", res.StopReason, res.Final)
			}
			var changed []string
			for _, c := range res.Changes {
				changed = append(changed, c.Path)
			}
			if strings.Join(changed, ",") != strings.Join(tc.wantChanged, ",") {
				t.Errorf("changed %v, want %v", changed, tc.wantChanged)
			}
			if tc.mode == ModeFix && (res.Baseline.Failed == 0 || res.Final.Failed != 0) {
				t.Errorf("baseline failed %d → final failed %d", res.Baseline.Failed, res.Final.Failed)
			}
			if nt := newTests(res.Baseline, res.Final); len(nt) < tc.wantNewTests {
				t.Errorf("new tests %v, want %d", nt, tc.wantNewTests)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("model requests = %d, want one code request (its reply carries the plan)", len(srv.Requests()))
			}
		})
	}
}

var _ sandbox.Backend = cachedBackend{}

func mustReadFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		panic(err)
	}
	return string(b)
}
