package python

import (
	"slices"
	"testing"
)

func TestMissingNames(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want []string
	}{
		{"ImportError: cannot import name 'is_relative_to' from 'installer.utils' (/workspace/src/installer/utils.py)", []string{"is_relative_to"}},
		{"AttributeError: module 'uritemplate.variable' has no attribute 'VariableValueMapping'", []string{"VariableValueMapping"}},
		{"AttributeError: 'NoneType' object has no attribute 'header'", nil},
		{"NameError: name 'x' is not defined", nil},
	} {
		if got := (Language{}).MissingNames(c.msg); !slices.Equal(got, c.want) {
			t.Errorf("MissingNames(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}
