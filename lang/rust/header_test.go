package rust

import "testing"

func TestHeaderLines(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      int
	}{
		{"crate root", "//! Docs.\n\n#![no_std]\n#![cfg_attr(\n    docsrs,\n    feature(doc_cfg)\n)]\n\n#[macro_use]\nextern crate alloc;\nuse core::{\n    cmp,\n};\nmod num;\n\npub fn f() {}\n", 14},
		{"an attribute on a function", "use std::fmt;\n\n#[inline]\nfn f() {}\n", 1},
		{"inline module", "mod tests {\n}\n", 0},
	} {
		if got := (Language{}).HeaderLines("src/lib.rs", []byte(c.src)); got != c.want {
			t.Errorf("%s: HeaderLines = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestImportAliases(t *testing.T) {
	src := "use crate::num::{as_u64 as to_int, Float};\nuse super::parse as parse_inner;\nuse std::io::Result as _;\n"
	got := (Language{}).ImportAliases("src/a.rs", []byte(src))
	if len(got) != 2 || got["to_int"] != "as_u64" || got["parse_inner"] != "parse" {
		t.Errorf("ImportAliases = %v", got)
	}
}
