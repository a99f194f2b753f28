//! A crate whose tests run pkg-config, as the pkg-config crate's own do
//! (rust-lang/pkg-config-rs): a Rust developer's machine has it.

/// The version pkg-config reports for a module found under dir.
pub fn modversion(dir: &str, module: &str) -> Option<String> {
    let out = std::process::Command::new("pkg-config")
        .arg("--modversion")
        .arg(module)
        .env("PKG_CONFIG_PATH", dir)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_fixture_module() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests");
        assert_eq!(super::modversion(dir, "shape").as_deref(), Some("1.2.3"));
    }

    #[test]
    fn a_missing_module_is_none() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests");
        assert_eq!(super::modversion(dir, "no-such-module"), None);
    }
}
