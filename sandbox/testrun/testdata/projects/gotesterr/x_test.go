package x

import "testing"

func TestX(t *testing.T) {
	var s string = X()
	_ = s
	undefinedFunc()
}
