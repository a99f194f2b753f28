package image_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang/golang"
	"github.com/fixpoint-dev/fixpoint/lang/node"
	"github.com/fixpoint-dev/fixpoint/lang/python"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
)

func TestRecipeHashStable(t *testing.T) {
	in := image.Inputs{Suite: "bookworm", Mirror: "http://deb.debian.org/debian", GoVersion: "go1.26.8"}
	// Golden values: a change here means every user's images rebuild, so it
	// must be deliberate (bump builderVersion and update these).
	// go: 303ca4ee63db -> 2a79698317ad in round 7, deliberately: its build
	// cache is prebuilt in the image's tree for cgo on too (goCacheVersion 2).
	// go: 2a79698317ad -> cda93c615b26 in round 9, deliberately: the cache
	// is read-only behind the image's GOCACHEPROG helper (goCacheVersion 3);
	// node: 9e89da36bf3b -> ee2a0dcd612a in round 9: make (`npm test` that
	// runs `make test`).
	golden := map[string]string{"python": "0b2261198bde", "go": "cda93c615b26", "node": "ee2a0dcd612a"}
	want := map[string]string{}
	for _, l := range registry.All() {
		r := image.RecipeFor(l)
		h1, h2 := r.Hash(in), r.Hash(in)
		if h1 != h2 || len(h1) != 12 {
			t.Fatalf("%s: Hash = %q then %q, want one stable 12-digit hash", l.Name(), h1, h2)
		}
		if g, ok := golden[l.Name()]; ok && h1 != g {
			t.Errorf("%s: Hash = %s, want %s (the recipe changed: every user's image rebuilds)", l.Name(), h1, g)
		}
		want[l.Name()] = h1
	}
	if want["python"] == want["go"] || want["go"] == want["node"] {
		t.Errorf("hashes collide: %v", want)
	}
	py := image.RecipeFor(python.Language{})
	goR := image.RecipeFor(golang.Language{})
	nodeR := image.RecipeFor(node.Language{})
	// python adds pip, venv and freezegun, go gcc for cgo, with apt-get
	// on a copy of the same debootstrapped tree: one debootstrap for both.
	if strings.Join(py.Packages, ",") != strings.Join(goR.Packages, ",") {
		t.Errorf("python and go should start from one debootstrapped tree")
	}
	if goR.RootfsKey(in) == py.RootfsKey(in) {
		t.Errorf("go's and python's extra packages must give them different root filesystems")
	}
	if py.RootfsKey(in) == goR.RootfsKey(in) {
		t.Errorf("python's extra packages must change its root filesystem key")
	}
	if nodeR.RootfsKey(in) == py.RootfsKey(in) {
		t.Errorf("node must not share python's root filesystem")
	}
	changes := []struct {
		name string
		in   image.Inputs
		r    image.Recipe
	}{
		{"mirror", image.Inputs{Suite: in.Suite, Mirror: "http://mirror.example/debian", GoVersion: in.GoVersion}, py},
		{"suite", image.Inputs{Suite: "trixie", Mirror: in.Mirror, GoVersion: in.GoVersion}, py},
		{"go version", image.Inputs{Suite: in.Suite, Mirror: in.Mirror, GoVersion: "go1.27.0"}, goR},
	}
	for _, c := range changes {
		if c.r.Hash(c.in) == c.r.Hash(in) {
			t.Errorf("changing the %s did not change the %s hash", c.name, c.r.Name)
		}
	}
	// What the Go build cache is prebuilt for is in the go image's hash.
	noCgo := image.RecipeFor(golang.Language{})
	noCgo.GoCacheEnvs = nil
	if noCgo.Hash(in) == goR.Hash(in) {
		t.Errorf("the go cache's prebuilt environments are not in the go image's hash")
	}
	// The Go version must not rebuild the python image.
	if py.Hash(image.Inputs{Suite: in.Suite, Mirror: in.Mirror, GoVersion: "go9"}) != py.Hash(in) {
		t.Errorf("python hash depends on the Go version")
	}
}

// TestEachImageCarriesItsOwnTools: the tree every image starts from is
// the same minimal one (git), and a language's tools are in its own image
// only: Python's pytest is not in the Go image, and no image's recipe
// holds a package another language's image asks for, but for the C
// toolchain (gcc, libc6-dev) that go and python both build native code
// with.
func TestEachImageCarriesItsOwnTools(t *testing.T) {
	owner := map[string]string{}
	var base string
	for _, l := range registry.All() {
		r := image.RecipeFor(l)
		pk := strings.Join(r.Packages, ",")
		if base == "" {
			base = pk
		}
		if pk != base || pk != "git" {
			t.Errorf("%s: Packages = %q, want the shared base %q (git only)", l.Name(), pk, "git")
		}
		for _, e := range r.Extra {
			// The C toolchain is every language's that builds native
			// code on a developer's machine with it: go's cgo, python's
			// C extensions and cpp.
			if e == "gcc" || e == "libc6-dev" {
				continue
			}
			if prev, ok := owner[e]; ok {
				t.Errorf("package %s is in both %s's and %s's image: a language's tools belong to its own image", e, prev, l.Name())
			}
			owner[e] = l.Name()
		}
		for _, env := range r.Env {
			if strings.HasPrefix(env, "PYTHON") && l.Name() != "python" {
				t.Errorf("%s's image sets %s: Python's settings belong to Python's image", l.Name(), env)
			}
		}
	}
	if owner["python3-pytest"] != "python" {
		t.Errorf("python3-pytest is in %q's image, want python's only", owner["python3-pytest"])
	}
}

func TestChanges(t *testing.T) {
	r := image.RecipeFor(golang.Language{})
	ch := strings.Join(r.Changes("abc123abc123"), "\n")
	for _, want := range []string{"LABEL fixpoint.recipe=abc123abc123", "USER 1000:1000", "WORKDIR /workspace", "ENV GOTOOLCHAIN=local", "ENV CGO_ENABLED=0", "ENV PATH=/usr/local/go/bin:"} {
		if !strings.Contains(ch, want) {
			t.Errorf("Changes lack %q:\n%s", want, ch)
		}
	}
	// Podman's import reads a LABEL line as one key=value: a second pair
	// on the same line would become part of the first label's value.
	labels := map[string]string{}
	for _, c := range r.Changes("abc123abc123") {
		if kv, ok := strings.CutPrefix(c, "LABEL "); ok {
			k, v, _ := strings.Cut(kv, "=")
			if strings.ContainsAny(v, " \t") {
				t.Errorf("change %q holds more than one label (Podman reads it as %s=%q)", c, k, v)
			}
			labels[k] = v
		}
	}
	if labels[image.LabelRecipe] != "abc123abc123" || labels[image.LabelLang] != "go" {
		t.Errorf("labels from Changes = %v, want %s=abc123abc123 and %s=go", labels, image.LabelRecipe, image.LabelLang)
	}
}

// The go image's build cache is prebuilt for the environment its test
// command runs go with (cgo on), beside the image's own: the recipe says
// so, and the prebuild script builds std, the warm-up test and vet in
// both, the second with exactly the language's variables over the image's.
func TestGoCachePrebuiltForTheTestCommand(t *testing.T) {
	r := image.RecipeFor(golang.Language{})
	if len(r.GoCacheEnvs) != 1 || strings.Join(r.GoCacheEnvs[0], " ") != "CGO_ENABLED=" {
		t.Fatalf("go recipe GoCacheEnvs = %q, want [[CGO_ENABLED=]] (the test command's cgo default)", r.GoCacheEnvs)
	}
	if !slices.Contains(r.Env, "CGO_ENABLED=0") {
		t.Fatalf("go image Env = %q: the image's own CGO_ENABLED=0 is prebuilt too; update this test if it changed", r.Env)
	}
	script := image.GoPrebuildScript("/gocache", r.GoCacheEnvs)
	steps := "go build std && go test -json -count=1 ./... >/dev/null && go vet ./..."
	if !strings.HasPrefix(script, "cd /tmp/fixpoint-warm && "+steps+" && env 'CGO_ENABLED=' sh -c '"+steps+"'") {
		t.Errorf("prebuild script = %q, want the steps in the image's environment, then under env 'CGO_ENABLED='", script)
	}
	if !strings.HasSuffix(script, "rm -f /gocache/testexpire.txt") {
		t.Errorf("prebuild script = %q, want it to drop testexpire.txt last", script)
	}
}

// TestGoCacheProgEnv: an image with the helper sets GOCACHEPROG in its
// own environment, as one value without spaces (engines split ENV values
// on them); one without (an older Go) does not.
func TestGoCacheProgEnv(t *testing.T) {
	r := image.RecipeFor(golang.Language{})
	for _, c := range r.Changes("abc") {
		if strings.Contains(c, "GOCACHEPROG") {
			t.Errorf("recipe without the helper sets %q", c)
		}
	}
	var got []string
	for _, c := range image.WithGoCacheProg(r).Changes("abc") {
		if strings.Contains(c, "GOCACHEPROG") {
			got = append(got, c)
		}
	}
	if len(got) != 1 || got[0] != "ENV GOCACHEPROG="+image.GoCacheProgPath || strings.ContainsAny(image.GoCacheProg, " \t\"'") {
		t.Errorf("GOCACHEPROG changes = %q, want [ENV GOCACHEPROG=%s]", got, image.GoCacheProgPath)
	}
}

// The node image has make: a project whose `npm test` is `make test`
// failed there with "make: not found".
func TestNodeImageHasMake(t *testing.T) {
	if r := image.RecipeFor(node.Language{}); !slices.Contains(r.Extra, "make") {
		t.Errorf("node image Extra = %q, want make in it", r.Extra)
	}
}
