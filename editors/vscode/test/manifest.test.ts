// Checks package.json against the code: every contributed command is
// registered, every registered command is contributed, every setting is read.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { COMMAND_IDS, SERVER_COMMANDS } from '../src/commands';
import { LANGUAGES, PROJECT_MARKERS, documentSelector } from '../src/languages';
import { SETTING_KEYS } from '../src/settings';

// npm test runs in editors/vscode.
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const extensionSource = readFileSync('src/extension.ts', 'utf8');

test('every contributed command is registered, and no other', () => {
  const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual(contributed, [...COMMAND_IDS].sort());
  // extension.ts registers exactly COMMAND_IDS, each through the typed handler table.
  assert.match(extensionSource, /for \(const id of COMMAND_IDS\) \{\s*this\.ctx\.subscriptions\.push\(vscode\.commands\.registerCommand\(id, handlers\[id\]\)\);/);
  assert.equal((extensionSource.match(/registerCommand\(/g) ?? []).length, 1, 'register commands only in the COMMAND_IDS loop');
  for (const id of COMMAND_IDS) assert.ok(extensionSource.includes(`'${id}':`), `extension.ts has a handler for ${id}`);
});

test("contributed commands don't collide with the server's", () => {
  // vscode-languageclient registers every server command; a second registration fails.
  for (const id of Object.values(SERVER_COMMANDS)) assert.ok(!(COMMAND_IDS as readonly string[]).includes(id), id);
});

test('every contributed setting is read, and no other', () => {
  const props = Object.keys(pkg.contributes.configuration.properties).sort();
  assert.deepEqual(props, SETTING_KEYS.map((k) => `fixpoint.${k}`).sort());
  // extension.ts reads settings only through readSettings.
  assert.match(extensionSource, /readSettings\(\(k\) => cfg\.get\(k\)\)/);
  assert.equal((extensionSource.match(/getConfiguration\(/g) ?? []).length, 1, 'one getConfiguration, in Extension.read');
  assert.equal((extensionSource.match(/cfg\.get\(/g) ?? []).length, 1, 'cfg.get only inside readSettings');
});

test('every command has a title in the Fixpoint category', () => {
  for (const c of pkg.contributes.commands) {
    assert.equal(c.category, 'Fixpoint', c.command);
    assert.ok(c.title.length > 0, c.command);
  }
  const titles = pkg.contributes.commands.map((c: { title: string }) => c.title);
  for (const want of ['Solve Goal…', 'Fix Until Tests Pass', 'Run Tests', 'Cancel Run', 'Show Output', 'Restart Server', 'Set API Key', 'Select Model…']) {
    assert.ok(titles.includes(want), want);
  }
});

test('packaging fields vsce needs', () => {
  for (const k of ['publisher', 'license', 'repository', 'engines', 'main']) assert.ok(pkg[k], k);
  assert.equal(pkg.main, './dist/extension.js');
});

// VS Code conventions (issue 13).

test('activation: the languages fixpoint handles, projects with test configs, and its commands — never at startup', () => {
  const events: string[] = pkg.activationEvents;
  assert.ok(!events.includes('*') && !events.includes('onStartupFinished'), `activationEvents = ${JSON.stringify(events)}`);
  const want = [
    ...LANGUAGES.map((l) => `onLanguage:${l}`),
    ...PROJECT_MARKERS.map((m) => `workspaceContains:${m}`),
    ...COMMAND_IDS.map((c) => `onCommand:${c}`),
  ];
  assert.deepEqual([...events].sort(), want.sort());
  for (const m of ['go.mod', 'package.json', 'pyproject.toml', 'setup.cfg', 'pytest.ini', 'Cargo.toml']) {
    assert.ok((PROJECT_MARKERS as readonly string[]).includes(m), m);
  }
});

test('documentSelector: those languages, files on disk only', () => {
  // LANGUAGES is generated from the Go language registry (go generate ./editors);
  // the selector must ask for exactly the languages package.json activates on.
  const activated = (pkg.activationEvents as string[])
    .filter((e) => e.startsWith('onLanguage:'))
    .map((e) => e.slice('onLanguage:'.length));
  assert.ok(activated.length >= 5, `onLanguage events = ${JSON.stringify(activated)}`);
  assert.deepEqual(documentSelector(), activated.map((language) => ({ scheme: 'file', language })));
  assert.match(extensionSource, /documentSelector: documentSelector\(\),/);
});

test('untrusted and virtual workspaces are declared unsupported, with the reason', () => {
  const u = pkg.capabilities?.untrustedWorkspaces;
  assert.equal(u?.supported, false);
  assert.match(u.description, /runs the workspace's tests/);
  assert.match(u.description, /\.fixpoint\.toml/);
  assert.equal(pkg.capabilities?.virtualWorkspaces?.supported, false);
});

test("settings a repository must not set are user-only (machine scope)", () => {
  const props = pkg.contributes.configuration.properties;
  const cases: { key: string; scope: string }[] = [
    { key: 'fixpoint.baseUrl', scope: 'machine' }, // where the code and the key go
    { key: 'fixpoint.model', scope: 'machine' },
    { key: 'fixpoint.path', scope: 'machine' }, // the binary that gets the key
    { key: 'fixpoint.sandbox', scope: 'machine' }, // "none" would run the tests unisolated
    { key: 'fixpoint.preview', scope: 'machine' },
    { key: 'fixpoint.maxIterations', scope: 'resource' },
  ];
  for (const c of cases) assert.equal(props[c.key]?.scope, c.scope, c.key);
  // The API key is no setting at all: SecretStorage only.
  assert.ok(!Object.keys(props).some((k) => /key|token|secret/i.test(k)), Object.keys(props).join(', '));
  assert.deepEqual(props['fixpoint.preview'].enum, ['always', 'never']);
  assert.equal(props['fixpoint.preview'].default, 'always');
});

test('icon (a PNG of at least 128x128, packaged), homepage, bugs', () => {
  assert.equal(pkg.icon, 'images/icon.png');
  const png = readFileSync(pkg.icon);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.ok(png.readUInt32BE(16) >= 128 && png.readUInt32BE(20) >= 128, 'at least 128x128');
  assert.match(readFileSync('.vscodeignore', 'utf8'), /^!images\/icon\.png$/m);
  assert.match(pkg.homepage, /^https:\/\//);
  assert.match(pkg.bugs?.url, /^https:\/\/.*\/issues$/);
  assert.match(pkg.repository?.url, /^https:\/\//);
});

test('command palette: Cancel Run only while a run is active (context key set by the extension)', () => {
  const menu: { command: string; when?: string }[] = pkg.contributes.menus.commandPalette;
  const when = Object.fromEntries(menu.map((m) => [m.command, m.when]));
  assert.equal(when['fixpoint.cancelRun'], 'fixpoint.runActive');
  for (const c of ['fixpoint.goal', 'fixpoint.fix', 'fixpoint.test', 'fixpoint.pickModel']) assert.equal(when[c], 'workspaceFolderCount > 0', c);
  for (const m of menu) assert.ok((COMMAND_IDS as readonly string[]).includes(m.command), m.command);
  assert.match(extensionSource, /const RUN_ACTIVE_KEY = 'fixpoint\.runActive';/);
  assert.match(extensionSource, /executeCommand\('setContext', RUN_ACTIVE_KEY, active\)/);
});

test('a keybinding for Solve Goal', () => {
  const kb: { command: string; key: string; mac?: string }[] = pkg.contributes.keybindings;
  const goal = kb.find((k) => k.command === 'fixpoint.goal');
  assert.ok(goal, 'fixpoint.goal has a keybinding');
  assert.equal(goal.key, 'ctrl+alt+g');
  assert.equal(goal.mac, 'cmd+alt+g');
});

test('a model picker fed by the server (fixpoint.listModels)', () => {
  const c = pkg.contributes.commands.find((x: { command: string }) => x.command === 'fixpoint.pickModel');
  assert.equal(c?.title, 'Select Model…');
  assert.equal(SERVER_COMMANDS.listModels, 'fixpoint.listModels');
  assert.match(extensionSource, /command: SERVER_COMMANDS\.listModels/);
  // The choice goes to the user's settings, where fixpoint.model (machine scope) can live.
  assert.match(extensionSource, /update\('model', picked\.value \|\| undefined, vscode\.ConfigurationTarget\.Global\)/);
});

test("the client's own progress UI and message requests are replaced, and run status is handled", () => {
  assert.match(extensionSource, /client\.onRequest\(WorkDoneProgressCreateRequest\.type/);
  assert.match(extensionSource, /location: vscode\.ProgressLocation\.Notification, title: [^,]+, cancellable: true/);
  assert.match(extensionSource, /WorkDoneProgressCancelNotification\.type, \{ token \}/);
  assert.match(extensionSource, /client\.onRequest\(ShowMessageRequest\.type/);
  assert.match(extensionSource, /orderActions\(/);
  assert.match(extensionSource, /client\.onNotification\(STATUS_NOTIFICATION/);
  assert.match(extensionSource, /for \(const line of outputLines\(s\)\) this\.output\.appendLine\(line\)/);
});

test('the client announces change annotation support; a verified edit needing confirmation is reviewed as a diff, then applied unannotated', () => {
  // vscode-languageclient computes the capabilities; the pinned version sets changeAnnotationSupport. The
  // extension only adds experimental.fixpointOutcomes (it shows each run's outcome itself).
  assert.equal(pkg.dependencies['vscode-languageclient'], '9.0.1');
  const client = readFileSync('node_modules/vscode-languageclient/lib/common/client.js', 'utf8');
  assert.match(client, /workspaceEdit\.changeAnnotationSupport = \{\s*groupsOnLabel: true\s*\};/);
  assert.match(extensionSource, /caps\.experimental = \{ \.\.\.\(caps\.experimental as object \| undefined\), fixpointOutcomes: true \};/);
  // The applyEdit handler reviews an edit needing confirmation, answers "declined" unless accepted, and applies
  // an accepted one without its annotations through the client's own handler, which must exist.
  assert.match(client, /\n    async handleApplyWorkspaceEdit\(params\) \{/);
  assert.match(
    extensionSource,
    /if \(!needsConfirmation\(p\.edit\)\) return defaultApply\(p\);\s*if \(\(await this\.review\(p\.edit\)\) !== ACCEPT\) return \{ applied: false, failureReason: 'declined' \};\s*return defaultApply\(\{ \.\.\.p, edit: withoutAnnotations\(p\.edit\) \}\);/,
  );
});

test('Accept / Discard on the review diff: title bar buttons and palette entries only while a review waits', () => {
  const title: { command: string; when?: string }[] = pkg.contributes.menus['editor/title'];
  for (const c of ['fixpoint.acceptFix', 'fixpoint.discardFix']) {
    assert.equal(title.find((m) => m.command === c)?.when, 'resourceScheme == fixpoint-proposed', c);
    assert.equal(pkg.contributes.menus.commandPalette.find((m: { command: string }) => m.command === c)?.when, 'fixpoint.reviewActive', c);
  }
  assert.match(extensionSource, /const PROPOSED_SCHEME = 'fixpoint-proposed';/);
  assert.match(extensionSource, /const REVIEW_ACTIVE_KEY = 'fixpoint\.reviewActive';/);
});
