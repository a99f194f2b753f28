package golang

import (
	"runtime"
	"testing"
)

func TestOtherPlatform(t *testing.T) {
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	for _, c := range []struct {
		path, src string
		want      bool
	}{
		{"backend_inotify.go", "//go:build linux && !appengine\n\npackage fsnotify\n", false},
		{"backend_fen.go", "//go:build solaris\n\npackage fsnotify\n", true},
		{"backend_kqueue.go", "// Copyright\n\n//go:build freebsd || openbsd || netbsd || dragonfly || darwin\n\npackage fsnotify\n", true},
		{"system_unix.go", "//go:build unix && go1.21\n\npackage x\n", false},
		{"watch_windows.go", "package x\n", true},
		{"watch_windows_test.go", "package x\n", true},
		{"watch_linux.go", "package x\n", false},
		{"asm_linux_" + other + ".go", "package x\n", true},
		{"asm_" + runtime.GOARCH + ".go", "package x\n", false},
		{"my_windows_helper.go", "package x\n", false},          // the suffix only counts last
		{"late.go", "package x\n\n//go:build windows\n", false}, // after the package clause: a comment
		{"plain.go", "package x\n", false},
		{"lib.py", "#go:build windows\n", false},
	} {
		if got := (Language{}).OtherPlatform(c.path, []byte(c.src)); got != c.want {
			t.Errorf("OtherPlatform(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}
