package memory

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestMain doubles as a writer child process for the crash and
// multi-process tests: with FIXPOINT_MEMORY_CHILD set, the test binary
// opens the store and writes instead of running tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("FIXPOINT_MEMORY_CHILD"); mode != "" {
		os.Exit(childWriter(mode))
	}
	os.Exit(m.Run())
}

// childWriter adds records named <prefix>-<n> for n = 0..count-1 (count 0
// means until killed) and prints "ack <id>" after each Add returns. In
// mode "compact" it also compacts the journal after every 3 adds.
func childWriter(mode string) int {
	data, root, prefix := os.Getenv("FIXPOINT_MEMORY_DATA"), os.Getenv("FIXPOINT_MEMORY_ROOT"), os.Getenv("FIXPOINT_MEMORY_PREFIX")
	count, _ := strconv.Atoi(os.Getenv("FIXPOINT_MEMORY_COUNT"))
	ctx := context.Background()
	s, err := Open(ctx, data, &Options{Root: root})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		return 3
	}
	out := bufio.NewWriter(os.Stdout)
	// Large excerpts make each write span many pages.
	filler := strings.Repeat("panic: runtime error: index out of range [7] with length 3\n", 120)
	for n := 0; count == 0 || n < count; n++ {
		id := fmt.Sprintf("%s-%d", prefix, n)
		_, err := s.Add(ctx, Record{ID: id, Language: "go", Excerpt: filler + id, Signature: "panic: crash test " + id})
		if err != nil {
			fmt.Fprintln(os.Stderr, "child add:", err)
			return 4
		}
		fmt.Fprintln(out, "ack", id)
		out.Flush()
		if mode == "compact" && n%3 == 2 {
			if err := s.Compact(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "child compact:", err)
				return 5
			}
		}
	}
	return 0
}
