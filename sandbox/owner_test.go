package sandbox

import (
	"os"
	"strconv"
	"testing"
)

func TestOwnerGone(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	start := ProcessStart(os.Getpid())
	if start == "" {
		t.Fatal("ProcessStart of this process is empty")
	}
	for _, tc := range []struct {
		name, pid, start string
		want             bool
	}{
		{"this process", self, start, false},
		{"this pid without a start label", self, "", false},
		{"pid reused by another process", self, start + "1", true},
		{"no such process", "2147483646", start, true},
		{"unreadable pid", "x", start, false},
		{"zero pid", "0", start, false},
	} {
		if got := OwnerGone(tc.pid, tc.start); got != tc.want {
			t.Errorf("%s: OwnerGone(%q, %q) = %v, want %v", tc.name, tc.pid, tc.start, got, tc.want)
		}
	}
}
