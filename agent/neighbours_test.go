package agent

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// Round 9, pure insertions: a long traced module (well over a whole
// file's room) where a fix adds a member after the last of a family of
// constants the traced code uses, a route pattern to the decorator of
// the function that dispatches to the one the failure names (which did
// not run, and which nothing else ranks), and an assignment in the module's main guard. The judged
// neighbourhoods (the lines on both sides of each insertion) are shown.
func TestContextNeighboursOfInsertions(t *testing.T) {
	mod := `"""Build package URLs from web URLs."""
import re

from purl.route import Router

RE_NPM_API = re.compile(r'^/(?P<name>[^/]+)$')
RE_NPM_DOWNLOAD = re.compile(r'^/(?P<name>[^/]+)/-/(?P<file>.+)$')
RE_PYPI = re.compile(r'^/project/(?P<name>[^/]+)')
RE_GEM = re.compile(
    r'^/gems/(?P<name>[^/]+)'
    r'-(?P<version>[^/]+)\.gem$')
RE_TABLE = {
    'k0': re.compile(r'^/k0/'),
    'k1': re.compile(r'^/k1/'),
    'k2': re.compile(r'^/k2/'),
    'k3': re.compile(r'^/k3/'),
    'k4': re.compile(r'^/k4/'),
    'k5': re.compile(r'^/k5/'),
    'k6': re.compile(r'^/k6/'),
    'k7': re.compile(r'^/k7/'),
    'k8': re.compile(r'^/k8/'),
    'k9': re.compile(r'^/k9/'),
    'k10': re.compile(r'^/k10/'),
    'k11': re.compile(r'^/k11/'),
    'k12': re.compile(r'^/k12/'),
    'k13': re.compile(r'^/k13/'),
    'k14': re.compile(r'^/k14/'),
    'k15': re.compile(r'^/k15/'),
    'k16': re.compile(r'^/k16/'),
    'k17': re.compile(r'^/k17/'),
    'k18': re.compile(r'^/k18/'),
    'k19': re.compile(r'^/k19/'),
    'k20': re.compile(r'^/k20/'),
    'k21': re.compile(r'^/k21/'),
    'k22': re.compile(r'^/k22/'),
    'k23': re.compile(r'^/k23/'),
    'k24': re.compile(r'^/k24/'),
    'k25': re.compile(r'^/k25/'),
    'k26': re.compile(r'^/k26/'),
    'k27': re.compile(r'^/k27/'),
    'k28': re.compile(r'^/k28/'),
    'k29': re.compile(r'^/k29/'),
}
DEFAULT_TIMEOUT = 10

g_state = None
router = Router()


def url2purl(url):
    """Return a purl for url, None when no route matches."""
    return router.process(url, RE_NPM_API)


@router.route('https?://registry.npmjs.*/.*',
              'https?://registry.yarnpkg.com/.*')
def dispatch_registry(uri):
    # npm URLs are difficult to disambiguate with regex
    if '/-/' in uri:
        return build_npm_download(uri)
    return build_npm_api(uri)


def build_npm_api(uri):
    m = RE_NPM_API.match(uri)
    return m and 'pkg:npm/' + m.group('name')


def build_npm_download(uri):
    m = RE_NPM_DOWNLOAD.match(uri)
    return m and 'pkg:npm/' + m.group('name')


` + filler("py", "unrelated_helper", 60) + `
def main():
    global g_state
    g_state = object()


if __name__ == '__main__':
    main()
else:
    _check()
`
	if len(mod) < 2*wholeFileMax {
		t.Fatalf("the module has %d bytes: the test wants one well over a whole file's room", len(mod))
	}
	test := "from purl.url2purl import url2purl\n\n\ndef test_web_url():\n    assert url2purl('https://www.npmjs.com/package/abbrev') == 'pkg:npm/abbrev'\n"
	snap := files("purl/__init__.py", "", "purl/route.py", "class Router:\n    def process(self, url, default):\n        return None\n",
		"purl/url2purl.py", mod, "tests/test_url2purl.py", test)
	rep := failing("tests/test_url2purl.py::test_web_url", "tests/test_url2purl.py", 5)
	rep.Tests[0].Message = "AssertionError: build_npm_api did not run for https://www.npmjs.com/package/abbrev"
	l := lineOf(mod, "def url2purl(")
	trace := lang.Trace{"purl/url2purl.py": {{From: l, To: l, Count: 0}, {From: l + 2, To: l + 2, Count: 0}},
		"purl/route.py": {{From: 2, To: 3, Count: 0}}}
	prompt := tracedPrompt(snap, rep, trace)
	for _, c := range []struct{ what, code string }{
		{"the family's last member's declaring line", "RE_TABLE = {"},
		{"the family's last member's end and the line after it", "    'k29': re.compile(r'^/k29/'),\n}\nDEFAULT_TIMEOUT = 10"},
		{"the dispatching caller with its decorator", "@router.route('https?://registry.npmjs.*/.*',\n              'https?://registry.yarnpkg.com/.*')\ndef dispatch_registry(uri):\n    # npm URLs are difficult to disambiguate with regex\n    if '/-/' in uri:"},
		{"the main guard", "if __name__ == '__main__':\n    main()\nelse:\n    _check()"},
	} {
		if !shown(prompt, "purl/url2purl.py", c.code) {
			t.Errorf("the prompt lacks %s:\n%s", c.what, sections(prompt))
		}
	}
	if shown(prompt, "purl/url2purl.py", "'k15': re.compile(r'^/k15/'),") {
		t.Errorf("a long family member is shown whole as the family's tail")
	}
	if shown(prompt, "purl/url2purl.py", "def unrelated_helper30(x):") {
		t.Errorf("the prompt shows the module whole: the test does not test excerpts")
	}
	if len(prompt) > 32*1024 {
		t.Errorf("the context is %d bytes, over 32 KB", len(prompt))
	}
}

// The callers of a function that did not run come with it, at the
// take, whatever the later passes would have shown: the dispatch the
// failing test expected (its route patterns). A function that ran, or
// one called from many places (a helper), brings none.
func TestNeighbourCallersOfUntracedFunction(t *testing.T) {
	src := "def url2purl(url):\n    return route(url)\n\n\n" +
		"@router.route('https?://registry.npmjs.*/.*',\n              'https?://registry.yarnpkg.com/.*')\ndef dispatch(uri):\n    return build_api(uri)\n\n\n" +
		"def build_api(uri):\n    return uri\n\n\n" +
		"def helper(x):\n    return x\n\n\n" +
		"def a(x):\n    return helper(x)\n\n\n" +
		"def b(x):\n    return helper(x)\n\n\n" +
		"def c(x):\n    return helper(x)\n"
	ls := strings.SplitAfter(src, "\n")
	mk := func() (*declFill, *fillFile) {
		f := &fillFile{p: "m.py", text: src, ls: ls, keep: make([]bool, len(ls)+1), limit: 1 << 20}
		f.units = declUnits(ls, nil, nil, nil)
		f.traced, f.tracedSpans = traceWeights(len(ls), f.units, []lang.Span{{From: 1, To: 2}})
		return &declFill{left: 1 << 20, files: []*fillFile{f}}, f
	}
	unit := func(f *fillFile, name string) declUnit {
		for _, u := range f.units {
			if u.name == name {
				return u
			}
		}
		t.Fatalf("no unit %s", name)
		return declUnit{}
	}
	fl, f := mk()
	u := unit(f, "build_api")
	fl.takeWithNeighbours(piece{0, u.from, u.to, 1})
	d := unit(f, "dispatch")
	for i := d.from; i <= d.at+1; i++ {
		if !f.keep[i] {
			t.Errorf("line %d of the dispatching caller (%q) is not shown", i+1, ls[i])
		}
	}
	fl, f = mk()
	u = unit(f, "helper")
	fl.takeWithNeighbours(piece{0, u.from, u.to, 1})
	if a := unit(f, "a"); f.keep[a.at] {
		t.Errorf("a helper called from three places brings its callers")
	}
	fl, f = mk()
	u = unit(f, "url2purl")
	fl.takeWithNeighbours(piece{0, u.from, u.to, 1})
	for i, k := range f.keep[:len(ls)] {
		if k && (i < u.from || i > u.to) {
			t.Errorf("a function that ran brings line %d (%q)", i+1, ls[i])
		}
	}
}
