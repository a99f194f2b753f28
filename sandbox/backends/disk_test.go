package backends

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
)

// TestDiskCaps: sandbox.workspace_size and sandbox.tmp_size reach both
// backends in bytes; absent keeps the backend default (0).
func TestDiskCaps(t *testing.T) {
	cases := []struct {
		ws, tmp         string
		wantWS, wantTmp int64
	}{
		{},
		{ws: "2g", tmp: "64m", wantWS: 2 << 30, wantTmp: 64 << 20},
		{tmp: "1048576", wantTmp: 1 << 20},
	}
	for _, tc := range cases {
		cfg := &config.Config{Sandbox: config.Sandbox{WorkspaceSize: tc.ws, TmpSize: tc.tmp}}
		ws, tmp := diskCaps(cfg)
		if ws != tc.wantWS || tmp != tc.wantTmp {
			t.Errorf("diskCaps(%q, %q) = %d, %d, want %d, %d", tc.ws, tc.tmp, ws, tmp, tc.wantWS, tc.wantTmp)
		}
		o := bwrapOptions(cfg, Options{})
		if o.WorkspaceSize != tc.wantWS || o.TmpSize != tc.wantTmp {
			t.Errorf("bwrapOptions(%q, %q) caps = %d, %d, want %d, %d", tc.ws, tc.tmp, o.WorkspaceSize, o.TmpSize, tc.wantWS, tc.wantTmp)
		}
	}
}
