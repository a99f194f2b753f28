package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// benchSection is one table of docs/BENCHMARKS.md: how to regenerate it,
// and the code that measures it.
type benchSection struct {
	key     string // marker name: <!-- bench:KEY begin --> … <!-- bench:KEY end -->
	title   string
	command string // the command that reproduces it
	run     func(ctx context.Context, a *app) (string, error)
}

// renderSection wraps a measured table with its title, command, machine and
// date, between markers so that --write can replace it in place.
func renderSection(s benchSection, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- bench:%s begin -->\n## %s\n\n", s.key, s.title)
	fmt.Fprintf(&b, "Reproduce: `%s` · machine: %s · date: %s\n\n", s.command, machine(), time.Now().UTC().Format("2006-01-02"))
	b.WriteString(strings.TrimRight(body, "\n"))
	fmt.Fprintf(&b, "\n<!-- bench:%s end -->\n", s.key)
	return b.String()
}

// writeSection replaces the section in file (or appends it), keeping the
// rest of the file as it is.
func writeSection(file, key, text string) error {
	old, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", file, err)
	}
	s := string(old)
	begin, end := "<!-- bench:"+key+" begin -->", "<!-- bench:"+key+" end -->\n"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	switch {
	case i >= 0 && j > i:
		s = s[:i] + text + s[j+len(end):]
	case s == "":
		s = "# Benchmarks\n\nEvery table says the command that regenerates it; `make bench` regenerates them all.\n\n" + text
	default:
		s = strings.TrimRight(s, "\n") + "\n\n" + text
	}
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

// machine describes this machine in one line.
func machine() string {
	desc := fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok {
					desc += ", " + strings.TrimSpace(v)
				}
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(strings.SplitN(string(b), "\n", 2)[0], "MemTotal: %d kB", &kb)
		if kb > 0 {
			desc += fmt.Sprintf(", %d GiB RAM", (kb+(1<<19))>>20)
		}
	}
	return desc
}
