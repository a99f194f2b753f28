// What fixpoint works on: the languages its test runners know and the files
// that mark a project it can test. package.json's activationEvents and the
// client's documentSelector are checked against these lists. No vscode import.

// BEGIN generated from lang/*/ (lang.Editors) by `go generate ./editors`: do not edit
/** VS Code language ids of the files the server is sent (file scheme only). */
export const LANGUAGES = ['go', 'rust', 'ruby', 'javascript', 'typescript', 'python'] as const;

/** Files at a workspace folder's root that mark a project fixpoint can test. */
export const PROJECT_MARKERS = [
  'go.mod',
  'Cargo.toml',
  'Gemfile',
  'package.json',
  'pyproject.toml',
  'setup.cfg',
  'setup.py',
  'pytest.ini',
  'tox.ini',
  '.fixpoint.toml',
] as const;
// END generated

/** The client's documentSelector: each language, files on disk only. */
export function documentSelector(): { scheme: 'file'; language: string }[] {
  return LANGUAGES.map((language) => ({ scheme: 'file', language }));
}
