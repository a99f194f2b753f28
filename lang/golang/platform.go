package golang

import (
	"bufio"
	"bytes"
	"go/build/constraint"
	"path"
	"runtime"
	"strings"
)

// sandboxOS is the GOOS every sandbox runs: a Go file built only for
// another is code no failing test there executed.
const sandboxOS = "linux"

// knownOS and knownArch are the GOOS and GOARCH values a file name suffix
// may carry (go/build's lists).
var (
	knownOS   = set("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos")
	knownArch = set("386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm")
)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// OtherPlatform reports whether the Go file p is left out of the build on
// linux and the host's architecture: by its name (x_windows.go,
// x_darwin_arm64.go) or its //go:build line. Test files count too.
func (Language) OtherPlatform(p string, data []byte) bool {
	if path.Ext(p) != ".go" {
		return false
	}
	name := strings.TrimSuffix(strings.TrimSuffix(path.Base(p), ".go"), "_test")
	parts := strings.Split(name, "_")
	if n := len(parts); n >= 2 {
		last, prev := parts[n-1], parts[n-2]
		switch {
		case knownArch[last] && knownOS[prev] && n >= 3:
			return !goosMatches(prev) || last != runtime.GOARCH
		case knownArch[last]:
			return last != runtime.GOARCH
		case knownOS[last]:
			return !goosMatches(last)
		}
	}
	expr := buildLine(data)
	if expr == nil {
		return false
	}
	return !expr.Eval(buildTag)
}

// goosMatches reports whether a file for GOOS os builds on linux.
func goosMatches(os string) bool { return os == sandboxOS }

// buildTag is whether a build tag holds in the sandbox: linux, unix, the
// host's architecture, the gc toolchain, cgo, and every go1.N release.
func buildTag(tag string) bool {
	switch tag {
	case sandboxOS, "unix", runtime.GOARCH, "gc", "cgo":
		return true
	}
	return strings.HasPrefix(tag, "go1.")
}

// buildLine parses the file's //go:build line (before the package
// clause); nil when it has none.
func buildLine(data []byte) constraint.Expr {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "/*") || strings.HasPrefix(l, "*"):
			continue
		case constraint.IsGoBuild(l):
			if e, err := constraint.Parse(l); err == nil {
				return e
			}
			return nil
		case strings.HasPrefix(l, "//"):
			continue
		default:
			return nil // the package clause: no constraint after it
		}
	}
	return nil
}
