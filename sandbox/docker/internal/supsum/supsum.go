// Package supsum names the embedded supervisor binaries and hashes their
// sources, for the generator and for the staleness test.
package supsum

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Arches are the architectures the supervisor is built for.
func Arches() []string { return []string{"amd64", "arm64"} }

// BinaryName is the file name of the supervisor built for arch.
func BinaryName(arch string) string { return "supervisor_linux_" + arch + ".bin" }

// sourceDirs are the directories, relative to sandbox/docker, whose
// non-test Go files make up the supervisor.
func sourceDirs() []string { return []string{"supervisor", "internal/wire"} }

// Sources hashes the supervisor's sources below dir (sandbox/docker).
func Sources(dir string) (string, error) {
	h := sha256.New()
	for _, d := range sourceDirs() {
		names, err := filepath.Glob(filepath.Join(dir, d, "*.go"))
		if err != nil {
			return "", err
		}
		sort.Strings(names)
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") {
				continue
			}
			b, err := os.ReadFile(n)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s/%s\x00%d\x00", d, filepath.Base(n), len(b))
			h.Write(b)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
