//! Registers `fixpoint serve` as a Zed language server. Zed starts language
//! servers only through extensions; the binary, its arguments and the
//! settings still come from the user's settings.json ("lsp" → "fixpoint").
use zed_extension_api::{self as zed, settings::LspSettings, LanguageServerId, Result};

struct Fixpoint;

impl zed::Extension for Fixpoint {
    fn new() -> Self {
        Fixpoint
    }

    fn language_server_command(&mut self, id: &LanguageServerId, worktree: &zed::Worktree) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(id.as_ref(), worktree).ok().and_then(|s| s.binary);
        let path = binary
            .as_ref()
            .and_then(|b| b.path.clone())
            .or_else(|| worktree.which("fixpoint"))
            .ok_or_else(|| "fixpoint is not on PATH: run go install ./cmd/fixpoint in a fixpoint checkout".to_string())?;
        let args = binary.and_then(|b| b.arguments).unwrap_or_else(|| vec!["serve".into()]);
        Ok(zed::Command { command: path, args, env: worktree.shell_env() })
    }

    fn language_server_initialization_options(
        &mut self,
        id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<zed::serde_json::Value>> {
        Ok(LspSettings::for_worktree(id.as_ref(), worktree).ok().and_then(|s| s.initialization_options))
    }

    fn language_server_workspace_configuration(
        &mut self,
        id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<zed::serde_json::Value>> {
        let settings = LspSettings::for_worktree(id.as_ref(), worktree).ok().and_then(|s| s.settings);
        Ok(settings.map(|s| zed::serde_json::json!({ "fixpoint": s })))
    }
}

zed::register_extension!(Fixpoint);
