package jsonpatch

import "testing"

func TestApply(t *testing.T) {
	if Apply("{}") != "{}" {
		t.Fatal("apply")
	}
}

func TestApplyEmpty(t *testing.T) {
	if Apply("") != "" {
		t.Fatal("empty")
	}
}
