// Package python is fixpoint's knowledge of Python projects: the version
// from .python-version or requires-python, and pip installs of
// requirements files or the project's test extras into a virtualenv that
// sees the image's own packages (pytest from Debian).
package python

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/pelletier/go-toml/v2"
)

// Venv is where dependencies are installed in a sandbox.
const Venv = "/deps/venv"

// Language is Python. The zero value is ready to use.
type Language struct{}

var (
	pyVersionOut = regexp.MustCompile(`Python ([0-9][0-9.]*)`)
	reqFile      = regexp.MustCompile(`^requirements([-_.][A-Za-z0-9_.-]*)?\.txt$`)
	cfgRequires  = regexp.MustCompile(`(?m)^python_requires\s*=\s*(.+)$`)
	cfgExtra     = regexp.MustCompile(`(?m)^(test|tests|testing|dev)\s*=`)
)

func (Language) Name() string             { return "python" }
func (Language) VersionCommand() []string { return []string{"python3", "--version"} }

// Detect: a Python manifest at the root, or any .py file.
func (Language) Detect(snap *sandbox.Snapshot) bool {
	for _, f := range []string{"pyproject.toml", "setup.cfg", "setup.py", "requirements.txt"} {
		if _, ok := snap.Files[f]; ok {
			return true
		}
	}
	return snap.Has("*.py")
}

// ParseVersion reads `python3 --version` output ("Python 3.11.2").
func (Language) ParseVersion(out string) (lang.Version, error) {
	m := pyVersionOut.FindStringSubmatch(out)
	if m == nil {
		return lang.Version{}, fmt.Errorf("no Python version in %q", strings.TrimSpace(out))
	}
	return lang.ParseVersion(m[1])
}

type pyproject struct {
	Project struct {
		RequiresPython string              `toml:"requires-python"`
		Optional       map[string][]string `toml:"optional-dependencies"`
	} `toml:"project"`
	Poetry struct {
		Dependencies map[string]any `toml:"dependencies"`
	} `toml:"tool.poetry"`
}

func readPyproject(snap *sandbox.Snapshot) (*pyproject, bool, error) {
	f, ok := snap.Files["pyproject.toml"]
	if !ok {
		return nil, false, nil
	}
	var p pyproject
	if err := toml.Unmarshal(lang.Contents(f), &p); err != nil {
		return nil, true, fmt.Errorf("pyproject.toml: %w", err)
	}
	return &p, true, nil
}

// Requirement reads .python-version, then pyproject.toml's
// requires-python, then setup.cfg's python_requires.
func (Language) Requirement(snap *sandbox.Snapshot) (*lang.Requirement, error) {
	if f, ok := snap.Files[".python-version"]; ok {
		line := strings.TrimSpace(strings.SplitN(string(lang.Contents(f)), "\n", 2)[0])
		if line != "" && line != "system" {
			r, err := ParseSpec(line)
			if err != nil {
				return nil, fmt.Errorf(".python-version: %w", err)
			}
			return &lang.Requirement{Runtime: "python", Constraint: line, Source: ".python-version", Range: r}, nil
		}
	}
	p, _, err := readPyproject(snap)
	if err != nil {
		return nil, err
	}
	if p != nil && strings.TrimSpace(p.Project.RequiresPython) != "" {
		c := strings.TrimSpace(p.Project.RequiresPython)
		r, err := ParseSpec(c)
		if err != nil {
			return nil, fmt.Errorf("pyproject.toml (requires-python): %w", err)
		}
		return &lang.Requirement{Runtime: "python", Constraint: c, Source: "pyproject.toml (requires-python)", Range: r}, nil
	}
	if f, ok := snap.Files["setup.cfg"]; ok {
		if m := cfgRequires.FindSubmatch(lang.Contents(f)); m != nil {
			c := strings.TrimSpace(string(m[1]))
			r, err := ParseSpec(c)
			if err != nil {
				return nil, fmt.Errorf("setup.cfg (python_requires): %w", err)
			}
			return &lang.Requirement{Runtime: "python", Constraint: c, Source: "setup.cfg (python_requires)", Range: r}, nil
		}
	}
	return nil, nil
}

// SetupStep installs root requirements*.txt files, else the project with
// its test or dev extras (`pip install -e .[test]`), into a virtualenv.
// A src/ layout that nothing installs gets PYTHONPATH=src, as an editable
// install would give it.
func (Language) SetupStep(snap *sandbox.Snapshot) *lang.Setup {
	var reqs []string
	for p := range snap.Files {
		if !strings.Contains(p, "/") && reqFile.MatchString(p) {
			reqs = append(reqs, p)
		}
	}
	sort.Strings(reqs)
	inputs := lang.InputsOf(snap, "pyproject.toml", "setup.cfg", "setup.py")
	var install []string
	name := ""
	switch extra := testExtra(snap); {
	case len(reqs) > 0:
		for _, r := range reqs {
			install = append(install, "-r "+r)
		}
		name = "pip install " + strings.Join(install, " ")
		inputs = append(inputs, reqs...)
	case extra != "":
		install = []string{"-e '.[" + extra + "]'"}
		name = "pip install -e .[" + extra + "]"
	}
	var env []string
	if srcLayout(snap) && (len(install) == 0 || len(reqs) > 0) {
		env = append(env, "PYTHONPATH=src")
	}
	if len(install) == 0 {
		if env == nil {
			return nil
		}
		return &lang.Setup{TestEnv: env}
	}
	// -I: `python -m` would put the working directory (the workspace)
	// first on sys.path, so a workspace pip.py, venv/ or any module the
	// installer imports later would run in the networked setup step.
	script := "python3 -I -m venv --system-site-packages " + Venv + " && " + Venv + "/bin/python -I -m pip install --disable-pip-version-check --no-input " + strings.Join(install, " ")
	return &lang.Setup{
		Name: name, Script: script, Inputs: inputs,
		// pip runs the project's build backend (-e .) and follows any path
		// a requirements file names: every input can make it run workspace
		// code.
		Code:    inputs,
		Caches:  []lang.Cache{{Name: "venv", Path: Venv}},
		Env:     []string{"PIP_NO_CACHE_DIR=1"},
		HostEnv: []string{"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_TRUSTED_HOST"},
		CAEnv:   []string{"PIP_CERT", "REQUESTS_CA_BUNDLE"},
		// pip's default index and where its files are.
		Registries: []string{"pypi.org", "files.pythonhosted.org"},
		TestEnv:    append(env, "VIRTUAL_ENV="+Venv),
		Path:       []string{Venv + "/bin"},
	}
}

// testExtra is the first of test, tests, testing, dev that the project
// declares as an optional-dependencies extra.
func testExtra(snap *sandbox.Snapshot) string {
	want := []string{"test", "tests", "testing", "dev"}
	if p, _, err := readPyproject(snap); err == nil && p != nil {
		for _, w := range want {
			if _, ok := p.Project.Optional[w]; ok {
				return w
			}
		}
	}
	if f, ok := snap.Files["setup.cfg"]; ok {
		if _, sec, ok := strings.Cut(string(lang.Contents(f)), "[options.extras_require]"); ok {
			sec, _, _ = strings.Cut(sec, "\n[")
			if m := cfgExtra.FindStringSubmatch(sec); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// srcLayout reports a src/<package>/__init__.py layout.
func srcLayout(snap *sandbox.Snapshot) bool {
	for p := range snap.Files {
		if strings.HasPrefix(p, "src/") && strings.Count(p, "/") == 2 && path.Base(p) == "__init__.py" {
			return true
		}
	}
	return false
}

// RuntimeFix says how to get a version that satisfies req.
func (Language) RuntimeFix(req *lang.Requirement) string {
	return "the sandbox images have Debian's Python only; relax " + req.Source + ", or set [sandbox] image (or dockerfile) to an image with a matching python3 in ~/.config/fixpoint/config.toml (or in a .fixpoint.toml you trust: fixpoint trust)"
}

// Image is the python image: python3 with pytest (the test runner) and
// hypothesis (property tests, PropertyHint); pip and venv for the setup
// phase (pip install into /deps/venv); freezegun because time-freezing
// tests commonly need it and PyPI may be out of reach. No other image has
// Python's tools. A C compiler and Python's headers, as a developer's
// machine has them: pip builds a C extension from source with them, and
// projects test through the C preprocessor (pycparser runs cpp; its
// tests failed in the image and passed natively); less, because a
// command-line library's pager tests call it (click's 24 pager tests).
func (Language) Image() lang.Image {
	return lang.Image{
		Extra: []string{"python3", "python3-pytest", "python3-hypothesis", "python3-pip", "python3-venv", "python3-freezegun", "python3-dev", "gcc", "libc6-dev", "less"},
		Env:   []string{"PYTHONDONTWRITEBYTECODE=1"},
	}
}

// PropertyHint points at hypothesis, which the images have but a user's
// environment may not.
func (Language) PropertyHint() string {
	return "Where a property holds for all inputs, add a property-based test with hypothesis if it is installed (guard the import), else a table of cases."
}
