package setup

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang/node"
	"github.com/fixpoint-dev/fixpoint/lang/rust"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/kubernetes"
)

// TestHostToolNotes: each backend says which toolchain runs when the
// language offers the host's own as a copy: docker the copy or why not,
// kubernetes that the image's runs; a fetchable runtime on kubernetes is
// the image's too, and said so. A configured image drops the copy.
func TestHostToolNotes(t *testing.T) {
	copyTool := sandbox.HostTool{Dir: "/h/.rustup/toolchains/stable-x", Copy: true, Target: rust.ToolchainTarget, Note: "the host's rustup toolchain stable-x (rustc 1.95.0, chosen by rustup's default toolchain)"}
	whyNot := sandbox.HostTool{Copy: true, Note: "rust-toolchain.toml names a toolchain by path"}
	say := func(b sandbox.Backend, l any, tools ...sandbox.HostTool) string {
		var lines []string
		p := &Preparer{b: b, opts: Options{Progress: func(s string) { lines = append(lines, s) }}}
		plan := &Plan{}
		switch x := l.(type) {
		case rust.Language:
			plan.Lang = x
		case node.Language:
			plan.Lang = x
		}
		p.hostToolNotes(&sandbox.Spec{HostTools: tools}, plan)
		return strings.Join(lines, "\n")
	}
	if got := say(&docker.Backend{}, rust.Language{}, copyTool); !strings.Contains(got, "rust: running the host's rustup toolchain stable-x") {
		t.Errorf("docker with the copy: %q", got)
	}
	if got := say(&docker.Backend{}, rust.Language{}, whyNot); !strings.Contains(got, "the image's toolchain runs, not the host's: rust-toolchain.toml names a toolchain by path") {
		t.Errorf("docker without: %q", got)
	}
	if got := say(&kubernetes.Backend{}, rust.Language{}, copyTool); !strings.Contains(got, "kubernetes backend runs the image's toolchain, not the host's rustup toolchain") {
		t.Errorf("kubernetes: %q", got)
	}
	if got := say(&kubernetes.Backend{}, node.Language{}); !strings.Contains(got, "node: the kubernetes backend runs the image's node version") {
		t.Errorf("kubernetes, node: %q", got)
	}
	if got := say(&docker.Backend{}, node.Language{}); got != "" {
		t.Errorf("docker, node, no host tool: %q", got)
	}

	// A configured image keeps its own toolchain: Prepare drops the copy
	// before anything else.
	spec := &sandbox.Spec{Image: "my/rust:1", HostTools: []sandbox.HostTool{{Dir: "/h/.cargo/bin", OnPath: true}, copyTool}}
	p := New(&docker.Backend{}, &Options{Runtimes: nil})
	_ = p.Prepare(t.Context(), spec, &sandbox.Snapshot{Files: map[string]sandbox.File{}}, &Plan{})
	for _, ht := range spec.HostTools {
		if ht.Copy {
			t.Errorf("image %s still gets %+v", spec.Image, ht)
		}
	}
	if len(spec.HostTools) != 1 {
		t.Errorf("host tools %+v, want bwrap's rustup proxy kept", spec.HostTools)
	}
}
