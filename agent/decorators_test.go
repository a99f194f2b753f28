package agent

import (
	"strings"
	"testing"
)

func TestLeadingStartMultiLineDecorator(t *testing.T) {
	src := `def get_path_segments(url):
    return segments


@purl_router.route('https?://registry.npmjs.*/.*',
                   'https?://registry.yarnpkg.com/.*')
def build_npm_purl(uri):
    # npm URLs are difficult to disambiguate with regex
    if '/-/' in uri:
        return build_npm_download_purl(uri)


class Views:
    # the index
    @app.get(
        "/",
        name="index",  # a comment (with a bracket
    )
    @login_required
    def index(self):
        pass

    x = compute(1,
        2)
    def after_call(self):
        pass

#[cfg_attr(
    test,
    derive(Debug)
)]
fn f() {}
`
	ls := strings.SplitAfter(src, "\n")
	at := func(prefix string) int {
		for i, l := range ls {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return i
			}
		}
		t.Fatalf("no line %q", prefix)
		return -1
	}
	for _, c := range []struct{ decl, want string }{
		{"def build_npm_purl", "@purl_router.route("},
		{"def index", "# the index"},
		{"def after_call", "def after_call"}, // a call's continuation above is no decorator
		{"fn f()", "#[cfg_attr("},
	} {
		if got, want := leadingStart(ls, at(c.decl)), at(c.want); got != want {
			t.Errorf("%s: leading lines start at %d (%q), want %d (%q)", c.decl, got+1, ls[got], want+1, ls[want])
		}
	}
	units := declUnits(ls, nil, nil, nil)
	for _, u := range units {
		if u.name == "build_npm_purl" && !strings.Contains(strings.Join(ls[u.from:u.to+1], ""), "registry.yarnpkg.com") {
			t.Errorf("build_npm_purl's unit leaves out its decorator's patterns: %q", ls[u.from:u.to+1])
		}
	}
}
