package python

import (
	"github.com/fixpoint-dev/fixpoint/lang/langtest"
	"strings"
	"testing"
)

func TestSetupChanges(t *testing.T) {
	req := func(s string) map[string]string { return map[string]string{"requirements.txt": s} }
	const reqs = "requests==2.31.0\nnumpy>=1.24  # arrays\n"
	const pyproj = "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"x\"\ndependencies = [\"requests>=2\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n"
	pp := func(s string) map[string]string { return map[string]string{"pyproject.toml": s} }
	langtest.RunSetupCases(t, Language{}, []langtest.SetupCase{
		{Name: "editable path", Before: req(reqs), After: req(reqs + "-e ./helpers\n"), Want: []string{`requirements.txt: adds the line "-e ./helpers"`}},
		{Name: "index options", Before: req(reqs), After: req("--extra-index-url https://evil.example/simple\n--trusted-host evil.example\n" + reqs),
			Want: []string{`"--extra-index-url https://evil.example/simple"`, `"--trusted-host evil.example"`}},
		{Name: "URL, VCS, path, include and build options", Before: req(""),
			After: req("x @ https://e.x/x.whl\ngit+https://e.x/y.git#egg=y\n./z\n-r other.in\n-c c.txt\n--find-links /tmp\nw==1 --config-settings a=b\n"),
			Want:  []string{`"x @ https://e.x/x.whl"`, `"git+https://e.x/y.git#egg=y"`, `"./z"`, `"-r other.in"`, `"-c c.txt"`, `"--find-links /tmp"`, `"w==1 --config-settings a=b"`}},
		{Name: "options after a marker", Before: req(""), After: req("w==1 ; python_version > \"3\" --config-settings a=b\nv==1; python_version > \"3\" --index-url http://evil\nu==${EVIL}\n"),
			Want: []string{`"w==1 ; python_version > \"3\" --config-settings a=b"`, `--index-url http://evil`, `"u==${EVIL}"`}},
		{Name: "changed spec", Before: req(reqs), After: req("requests==2.32.0\nnumpy>=1.24  # arrays\n"),
			Want: []string{`changes "requests==2.31.0" to "requests==2.32.0"`}},
		{Name: "line continuation hides a URL", Before: req(reqs), After: req(reqs + "evil \\\n @ https://e.x/e.whl\n"), Want: []string{`"evil @ https://e.x/e.whl"`}},
		{Name: "an included file of any name", Before: map[string]string{"requirements.txt": "-r deps/base.in\n", "deps/base.in": "a==1\n"},
			After: map[string]string{"requirements.txt": "-r deps/base.in\n", "deps/base.in": "a==1\n-e ../evil\n"}, Want: []string{`deps/base.in: adds the line "-e ../evil"`}},
		{Name: "setup.py", Before: map[string]string{"setup.py": "setup()"}, After: map[string]string{"setup.py": "import os; setup()"}, Want: []string{"setup.py: changes setup.py"}},
		{Name: "code setup.py imports or execs", Before: map[string]string{"setup.py": "from pkg.version import V\nexec(open('pkg/_meta.py').read())\n", "pkg/version.py": "V=1", "pkg/_meta.py": "", "pkg/core.py": ""},
			After: map[string]string{"setup.py": "from pkg.version import V\nexec(open('pkg/_meta.py').read())\n", "pkg/version.py": "import socket", "pkg/_meta.py": "x", "pkg/core.py": "y"},
			Want:  []string{"pkg/_meta.py: changes code the build", "pkg/version.py: changes code the build"}},
		{Name: "in-tree build backend", Before: pp("[build-system]\nbackend-path = [\"_build\"]\nbuild-backend = \"backend\"\n"),
			After: map[string]string{"pyproject.toml": "[build-system]\nbackend-path = [\"_build\"]\nbuild-backend = \"backend\"\n", "_build/backend.py": "import os"},
			Want:  []string{"_build/backend.py: changes code the build"}},
		{Name: "build-system", Before: pp(pyproj), After: pp(strings.Replace(pyproj, `"setuptools.build_meta"`, `"evil"`, 1)), Want: []string{"pyproject.toml: changes [build-system]"}},
		{Name: "build backend tool table", Before: pp(pyproj), After: pp(pyproj + "[tool.hatch.build.hooks.custom]\npath = \"h.py\"\n"), Want: []string{"changes [tool.hatch]"}},
		{Name: "project dependency from a URL", Before: pp(pyproj), After: pp(strings.Replace(pyproj, `["requests>=2"]`, `["requests>=2", "x @ git+https://e.x/x"]`, 1)),
			Want: []string{`pyproject.toml: [project] dependencies: adds the line "x @ git+https://e.x/x"`}},
		{Name: "project dependency spec changed", Before: pp(pyproj), After: pp(strings.Replace(pyproj, `["requests>=2"]`, `["requests<2"]`, 1)),
			Want: []string{`changes "requests>=2" to "requests<2"`}},
		{Name: "dynamic metadata", Before: pp(pyproj), After: pp(strings.Replace(pyproj, "name = \"x\"\n", "name = \"x\"\ndynamic = [\"version\"]\n", 1)), Want: []string{"changes [project] dynamic"}},
		{Name: "setup.cfg options", Before: map[string]string{"setup.cfg": "[metadata]\nname = x\n"}, After: map[string]string{"setup.cfg": "[metadata]\nname = x\n[options]\nsetup_requires = evil\n"},
			Want: []string{"setup.cfg: changes [options]"}},
		{Name: ".pth file", Before: map[string]string{}, After: map[string]string{"src/x.pth": "import os"}, Want: []string{"src/x.pth: adds or changes a .pth file"}},

		// Near misses.
		{Name: "comment", Before: req(reqs), After: req("# pinned\nrequests==2.31.0\nnumpy>=1.24  # the arrays\n")},
		{Name: "new plain dependency is left to the allow-list", Before: req(reqs), After: req(reqs + "more-itertools==10.0\n")},
		{Name: "plain lines with extras, markers and hashes", Before: req(""), After: req("a[x,y]>=1,<2; python_version < \"3.12\"\nb==1 --hash=sha256:abc\n")},
		{Name: "reordered", Before: req(reqs), After: req("numpy>=1.24\nrequests==2.31.0\n")},
		{Name: "pytest settings are test infrastructure", Before: pp(pyproj), After: pp(strings.Replace(pyproj, `"-q"`, `"-x"`, 1))},
		{Name: "linter settings", Before: pp(pyproj), After: pp(pyproj + "[tool.ruff]\nline-length = 100\n")},
		{Name: "setup.cfg pytest and flake8 sections", Before: map[string]string{"setup.cfg": "[metadata]\nname = x\n"}, After: map[string]string{"setup.cfg": "[metadata]\nname = x\n# a comment\n[tool:pytest]\naddopts = -q\n[flake8]\nmax-line-length = 100\n"}},
		{Name: "module setup.py does not import", Before: map[string]string{"setup.py": "from setuptools import setup\nsetup()", "pkg/core.py": "a"},
			After: map[string]string{"setup.py": "from setuptools import setup\nsetup()", "pkg/core.py": "b"}},
		{Name: "deleted requirement", Before: req(reqs), After: req("requests==2.31.0\n")},
	})
}
