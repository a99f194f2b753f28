// Command editorgen writes the registered languages (lang/registry) into
// the editor recipes under editors/ (internal/editorgen). It runs from
// editors/doc.go's go:generate line: `go generate ./editors`.
//
// Usage: editorgen [-dir editors-directory]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fixpoint-dev/fixpoint/internal/editorgen"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
)

func main() {
	dir := flag.String("dir", ".", "the editors/ directory")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "editorgen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	read := func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, p)) }
	files, err := editorgen.Generate(registry.All(), read)
	if err != nil {
		return err
	}
	for _, p := range editorgen.Paths() {
		old, err := read(p)
		if err != nil {
			return err
		}
		if bytes.Equal(old, files[p]) {
			continue
		}
		full := filepath.Join(dir, p)
		info, err := os.Stat(full)
		if err != nil {
			return err
		}
		if err := os.WriteFile(full, files[p], info.Mode().Perm()); err != nil {
			return err
		}
		fmt.Println("wrote", full)
	}
	return nil
}
