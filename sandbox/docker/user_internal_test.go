package docker

import "testing"

// TestSandboxUser: commands never run as root because of the image: an
// image whose USER is root (by number or name, with or without a group),
// unset or not a valid uid runs them as nobody, and a non-root uid keeps
// a non-root group. What the user configures is used as it is.
func TestSandboxUser(t *testing.T) {
	tests := []struct{ configured, image, want string }{
		{"", "", "65534:65534"},
		{"", "0", "65534:65534"},
		{"", "0:0", "65534:65534"},
		{"", "0:1000", "65534:65534"},
		{"", "00", "65534:65534"},
		{"", "root", "65534:65534"},
		{"", "root:root", "65534:65534"},
		{"", "-1", "65534:65534"},
		{"", "4294967296", "65534:65534"}, // 2^32: not a uid (runc's range ends at 2^31-1)
		{"", "app", "65534:65534"},        // a name: its uid is unknown here
		{"", "1000", "1000:1000"},
		{"", "1000:0", "1000:1000"},
		{"", "1000:100", "1000:100"},
		{"2000:2000", "0", "2000:2000"},
	}
	for _, tt := range tests {
		if got := sandboxUser(tt.configured, tt.image); got != tt.want {
			t.Errorf("sandboxUser(%q, image user %q) = %q, want %q", tt.configured, tt.image, got, tt.want)
		}
	}
}
