// Package rust is fixpoint's knowledge of Rust crates: detection from
// Cargo.toml, the toolchain requirement (Cargo.toml rust-version,
// rust-toolchain(.toml)), the host's rustup toolchain that bwrap binds
// and docker copies (hosttools.go, toolchain.go: the one a native run
// would use), `cargo test --offline` and its libtest output
// ([Parse]), vendored dependencies ([CheckVendored]: crates.io is never
// reached), the test files and test infrastructure ([IsTestFile],
// [IsTestInfra]) and the policy rules for model-written Rust ([Check]).
//
// Test results come from libtest's stable human output: one
// "test NAME ... ok|FAILED|ignored" line per test, "---- NAME stdout ----"
// failure sections with the panic and its file:line, and a "test result:"
// summary per test binary (the library's unit tests, each tests/*.rs, the
// doc-tests). A crate that does not compile is a build failure, not a
// failed test.
package rust
