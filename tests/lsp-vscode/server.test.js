// Drives `fixpoint serve` with vscode-languageserver-protocol, the library
// VS Code's LSP client is built on: VS Code's initialize capabilities,
// numeric request ids, cancellation, work-done progress, and applyEdit
// answered as VS Code does (versioned edits applied to in-memory documents).
//
// Env: FIXPOINT_BIN (the binary), E2E_ROOT (a workspace whose test_calc.py
// fails until calc.py returns a + b), and the server's FIXPOINT_* settings.
// Run from Go: go test ./server -run TestVSCodeProtocol.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const rpc = require('vscode-languageserver-protocol/node');
const { TextDocument } = require('vscode-languageserver-textdocument');

const bin = process.env.FIXPOINT_BIN;
const root = process.env.E2E_ROOT;
const uriOf = (rel) => pathToFileURL(path.join(root, rel)).href;

function until(pred, ms, what) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = () => {
      const v = pred();
      if (v) return resolve(v);
      if (Date.now() - t0 > ms) return reject(new Error('timed out waiting for ' + what));
      setTimeout(tick, 20);
    };
    tick();
  });
}

test('fixpoint serve speaks LSP to VS Code\'s protocol library', { timeout: 600000 }, async () => {
  assert.ok(bin && root, 'FIXPOINT_BIN and E2E_ROOT must be set');
  const proc = spawn(bin, ['serve', '--stdio'], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  const conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));

  const docs = new Map();
  const diagnostics = new Map();
  const progress = [];
  const applied = [];
  conn.onRequest(rpc.WorkDoneProgressCreateRequest.type, () => null);
  conn.onRequest(rpc.ConfigurationRequest.type, (p) => p.items.map(() => ({ maxIterations: 3 })));
  conn.onRequest(rpc.ApplyWorkspaceEditRequest.type, (p) => {
    applied.push(p);
    for (const change of p.edit.documentChanges || []) {
      if (change.kind) continue; // resource operations
      const doc = docs.get(change.textDocument.uri);
      if (!doc || (change.textDocument.version !== null && change.textDocument.version !== doc.version)) {
        return { applied: false, failureReason: 'version mismatch' };
      }
      docs.set(doc.uri, TextDocument.create(doc.uri, doc.languageId, doc.version + 1, TextDocument.applyEdits(doc, change.edits)));
    }
    return { applied: true };
  });
  conn.onNotification(rpc.PublishDiagnosticsNotification.type, (p) => diagnostics.set(p.uri, p.diagnostics));
  conn.onNotification('$/progress', (p) => progress.push(p));
  conn.onNotification(rpc.ShowMessageNotification.type, () => {});
  conn.onNotification(rpc.LogMessageNotification.type, () => {});
  conn.listen();

  const caps = JSON.parse(fs.readFileSync(path.join(__dirname, 'vscode-capabilities.json'), 'utf8'));
  const init = await conn.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid, clientInfo: { name: 'Visual Studio Code', version: '1.95.0' }, locale: 'en',
    rootPath: root, rootUri: pathToFileURL(root).href, capabilities: caps, trace: 'off',
    // As the extension sends it: VS Code trusts the workspace, so the server prepares and runs without asking.
    initializationOptions: { workspaceTrusted: true },
    workspaceFolders: [{ uri: pathToFileURL(root).href, name: path.basename(root) }],
  });
  assert.deepStrictEqual(init.capabilities.executeCommandProvider.commands,
    ['fixpoint.solveGoal', 'fixpoint.fixTests', 'fixpoint.runTests', 'fixpoint.cancel', 'fixpoint.listModels']);
  conn.sendNotification(rpc.InitializedNotification.type, {});

  for (const rel of ['calc.py', 'test_calc.py']) {
    const doc = TextDocument.create(uriOf(rel), 'python', 1, fs.readFileSync(path.join(root, rel), 'utf8'));
    docs.set(doc.uri, doc);
    conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, { textDocument: { uri: doc.uri, languageId: 'python', version: 1, text: doc.getText() } });
  }
  // An incremental change with an emoji before the edit point (UTF-16 offsets).
  {
    const uri = uriOf('calc.py');
    const doc = docs.get(uri);
    const changes = [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '# 😀 calc\n' }];
    docs.set(uri, TextDocument.create(uri, 'python', 2, TextDocument.applyEdits(doc, [{ range: changes[0].range, newText: changes[0].text }])));
    conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 2 }, contentChanges: changes });
  }

  // Cancellation with a numeric id: a cancelled request is answered
  // (result or RequestCancelled) and the connection stays healthy.
  const source = new rpc.CancellationTokenSource();
  const cancelled = conn.sendRequest(rpc.CodeActionRequest.type, {
    textDocument: { uri: uriOf('calc.py') }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] },
  }, source.token);
  source.cancel();
  await cancelled.then(() => {}, (e) => assert.strictEqual(e.code, rpc.LSPErrorCodes.RequestCancelled));

  // Run tests: a diagnostic at the failing assertion.
  const started = await conn.sendRequest(rpc.ExecuteCommandRequest.type, { command: 'fixpoint.runTests', arguments: [{ uri: uriOf('test_calc.py') }] });
  assert.strictEqual(started.started, true);
  const diags = await until(() => (diagnostics.get(uriOf('test_calc.py')) || []).length > 0 && diagnostics.get(uriOf('test_calc.py')), 240000, 'diagnostics');
  assert.strictEqual(diags[0].source, 'fixpoint');
  assert.strictEqual(diags[0].range.start.line, 7);
  await until(() => progress.some((p) => p.value.kind === 'end' && p.token === 'fixpoint/' + started.runId), 60000, 'runTests progress end');

  // Code actions at the failure, as VS Code asks for them.
  const actions = await conn.sendRequest(rpc.CodeActionRequest.type, {
    textDocument: { uri: uriOf('test_calc.py') }, range: diags[0].range, context: { diagnostics: diags, triggerKind: 1 },
  });
  const quickfix = actions.find((a) => a.kind === 'quickfix');
  assert.ok(quickfix && quickfix.isPreferred && quickfix.title === 'Fix until tests pass', JSON.stringify(actions));

  // A run cancelled from the progress UI (window/workDoneProgress/cancel).
  const run1 = await conn.sendRequest(rpc.ExecuteCommandRequest.type, quickfix.command);
  await until(() => progress.some((p) => p.token === 'fixpoint/' + run1.runId && p.value.kind === 'begin'), 60000, 'progress begin');
  conn.sendNotification(rpc.WorkDoneProgressCancelNotification.type, { token: 'fixpoint/' + run1.runId });
  const end1 = await until(() => progress.find((p) => p.token === 'fixpoint/' + run1.runId && p.value.kind === 'end'), 60000, 'cancelled run to end');
  assert.match(end1.value.message, /Cancelled/);
  assert.strictEqual(applied.length, 0);

  // The fix, applied through applyEdit at the version VS Code holds.
  const run2 = await conn.sendRequest(rpc.ExecuteCommandRequest.type, quickfix.command);
  assert.strictEqual(run2.started, true);
  await until(() => applied.length > 0, 300000, 'applyEdit');
  const edit = applied[0].edit.documentChanges[0];
  assert.strictEqual(edit.textDocument.version, 2);
  assert.strictEqual(docs.get(uriOf('calc.py')).getText(), '# 😀 calc\ndef add(a, b):\n    return a + b\n');
  await until(() => (diagnostics.get(uriOf('test_calc.py')) || [1]).length === 0, 60000, 'diagnostics to clear');

  await conn.sendRequest(rpc.ShutdownRequest.type);
  conn.sendNotification(rpc.ExitNotification.type);
  assert.strictEqual(await exited, 0);
  conn.dispose();
});
