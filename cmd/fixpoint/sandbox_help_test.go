package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
)

// TestSandboxHelpNamesEveryLanguage: the sandbox help derives its image
// names and --lang choices from the registry, so a registered language
// is in it without an edit here, and the examples build the image a
// workspace in no known language runs in.
func TestSandboxHelpNamesEveryLanguage(t *testing.T) {
	helpOf := func(args ...string) string {
		_, stdout, stderr := runCLI(t, nil, args...)
		return stdout + stderr
	}
	runHelp := helpOf("sandbox", "run", "--help")
	help := helpOf("sandbox", "--help")
	buildHelp := helpOf("sandbox", "images", "build", "--help")
	for _, name := range registry.Names() {
		if img := image.ImageName(name); !strings.Contains(runHelp, img) {
			t.Errorf("sandbox run --help does not name %s's image %s:\n%s", name, img, runHelp)
		}
		if !strings.Contains(help, "|"+name+"|") && !strings.Contains(help, "["+"--lang "+name+"|") {
			t.Errorf("sandbox --help: --lang does not offer %s:\n%s", name, help)
		}
		if !strings.Contains(buildHelp, name) {
			t.Errorf("sandbox images build --help does not offer %s:\n%s", name, buildHelp)
		}
	}
	example := "fixpoint sandbox images build --lang " + registry.Fallback().Name()
	for _, h := range []string{help, buildHelp} {
		if !strings.Contains(h, example) {
			t.Errorf("help has no example %q:\n%s", example, h)
		}
	}
}

// TestREADMEImageTableListsEveryLanguage: README's table of the images
// `fixpoint sandbox images build` makes is written by hand (what each
// image carries), so this fails when a registered language has no row, or
// a row names an image no registered language builds.
func TestREADMEImageTableListsEveryLanguage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n| image | contents |\n")
	if !ok {
		t.Fatal("README.md: no \"| image | contents |\" table (the sandbox images)")
	}
	if end := strings.Index(table, "\n\n"); end >= 0 {
		table = table[:end]
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `"+regexp.QuoteMeta(image.ImageName(""))+"([a-z0-9]+)` \\|").FindAllStringSubmatch(table, -1) {
		rows[m[1]] = true
	}
	for _, name := range registry.Names() {
		if !rows[name] {
			t.Errorf("README.md's image table has no row for %s (`%s`): say what its image carries (lang/%s's Image)", name, image.ImageName(name), name)
		}
		delete(rows, name)
	}
	for name := range rows {
		t.Errorf("README.md's image table has a row for %s, which no registered language builds", image.ImageName(name))
	}
}

// A --tag that is no Docker tag is a usage error naming the flag, before
// any engine is asked.
func TestSandboxImagesBuildTagUsage(t *testing.T) {
	for _, bad := range []string{"-x", ".hidden", "a:b", "a/b", strings.Repeat("t", 129)} {
		code, _, stderr := runCLI(t, nil, "sandbox", "images", "build", "--tag="+bad)
		if code != exitUsage || !strings.Contains(stderr, "--tag") {
			t.Errorf("--tag=%q: exit %d, stderr %q; want a usage error naming --tag", bad, code, stderr)
		}
	}
}
