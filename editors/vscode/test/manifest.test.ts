// Checks package.json against the code: every contributed command is
// registered, every registered command is contributed, every setting is read.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { COMMAND_IDS, SERVER_COMMANDS } from '../src/commands';
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
  for (const want of ['Solve Goal…', 'Fix Until Tests Pass', 'Run Tests', 'Cancel Run', 'Show Output', 'Restart Server', 'Set API Key']) {
    assert.ok(titles.includes(want), want);
  }
});

test('packaging fields vsce needs', () => {
  for (const k of ['publisher', 'license', 'repository', 'engines', 'main']) assert.ok(pkg[k], k);
  assert.equal(pkg.main, './dist/extension.js');
});
