import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACCEPT, DISCARD, applyTextEdits, lineCounts, offsetAt, reviewInfo, reviewMessage, withoutAnnotations } from '../src/review';
import { type RunStatus, outcomeNotice, statusView } from '../src/runs';

// The edit the server sends with preview = "always": documentChanges, every edit under the "fixpoint" annotation.
const annotated = {
  documentChanges: [
    {
      textDocument: { uri: 'file:///p/stats.go', version: 3 },
      edits: [{ range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } }, newText: 'b2\nb3\n', annotationId: 'fixpoint' }],
    },
    { kind: 'create', uri: 'file:///p/new.go', options: { ignoreIfExists: true }, annotationId: 'fixpoint' },
    {
      textDocument: { uri: 'file:///p/new.go', version: null },
      edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: 'package p\n', annotationId: 'fixpoint' }],
    },
  ],
  changeAnnotations: { fixpoint: { label: 'Fix until tests pass', needsConfirmation: true, description: 'verified: 1 iteration, 2 tests passing' } },
};

test('reviewInfo: the files in order (a created file once), the annotation label and description', () => {
  const info = reviewInfo(annotated);
  assert.equal(info.label, 'Fix until tests pass');
  assert.equal(info.description, 'verified: 1 iteration, 2 tests passing');
  assert.deepEqual(
    info.files.map((f) => [f.uri, f.create, f.delete, f.edits.length]),
    [
      ['file:///p/stats.go', false, false, 1],
      ['file:///p/new.go', true, false, 1],
    ],
  );
  assert.deepEqual(reviewInfo({ changes: { 'file:///a': [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, newText: 'x' }] } }).files.length, 1);
  assert.deepEqual(reviewInfo(null).files, []);
});

test('withoutAnnotations: the same edits, no annotation left (VS Code then applies at once), the input untouched', () => {
  const plain = withoutAnnotations(annotated);
  assert.equal(JSON.stringify(plain).includes('annotationId'), false);
  assert.equal('changeAnnotations' in plain, false);
  assert.equal(plain.documentChanges.length, 3);
  assert.deepEqual(plain.documentChanges[0], {
    textDocument: { uri: 'file:///p/stats.go', version: 3 },
    edits: [{ range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } }, newText: 'b2\nb3\n' }],
  });
  assert.equal(annotated.documentChanges[0].edits?.[0].annotationId, 'fixpoint');
});

test('applyTextEdits: what the file becomes, edits applied back to front, positions clamped', () => {
  assert.equal(applyTextEdits('a\nb\nc\n', annotated.documentChanges[0].edits ?? []), 'a\nb2\nb3\nc\n');
  const two = [
    { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, newText: 'X' },
    { range: { start: { line: 2, character: 0 }, end: { line: 2, character: 1 } }, newText: 'Z' },
  ];
  assert.equal(applyTextEdits('a\nb\nc', two), 'X\nb\nZ');
  assert.equal(applyTextEdits('', [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: 'new\n' }]), 'new\n');
  assert.equal(offsetAt('ab\ncd', { line: 0, character: 99 }), 2);
  assert.equal(offsetAt('ab\ncd', { line: 9, character: 0 }), 5);
});

test('lineCounts and reviewMessage: "+2 −1" per file, no link syntax from model-chosen names', () => {
  assert.deepEqual(lineCounts('a\nb\nc\n', 'a\nb2\nb3\nc\n'), { added: 2, removed: 1 });
  assert.deepEqual(lineCounts('', 'x\n'), { added: 1, removed: 0 });
  const msg = reviewMessage({ label: '[x](command:evil)', description: 'verified', files: [] }, [{ name: 'stats.go', added: 2, removed: 1 }]);
  assert.match(msg, /stats\.go \(\+2 −1\)/);
  assert.match(msg, /Accept applies it \(one undo reverts it\), Discard declines it/);
  assert.doesNotMatch(msg, /\]\(/);
  assert.notEqual(ACCEPT, DISCARD);
});

const status = (p: Partial<RunStatus>): RunStatus => ({ runId: 'r1', kind: 'fix', state: 'applied', message: '', files: [], ...p });

test('outcomeNotice: one notification per outcome of a fix or solve run, none for test runs', () => {
  const applied = outcomeNotice(status({ files: [{ path: 'stats.go', added: 4, removed: 1 }], passing: 2 }));
  assert.equal(applied?.severity, 'info');
  assert.match(applied?.message ?? '', /verified and applied — 1 file changed: stats\.go \(\+4 −1\); 2 tests passing\./);
  // Fix Until Tests Pass on a passing project: a visible answer.
  assert.deepEqual(outcomeNotice(status({ message: 'Nothing to fix: the tests already pass' })), {
    severity: 'info',
    message: 'fixpoint: Fix until tests pass: Nothing to fix: the tests already pass.',
    actions: [],
  });
  assert.match(outcomeNotice(status({ state: 'verified-not-applied', reason: 'declined' }))?.message ?? '', /verified, not applied \(you discarded it\)/);
  const conflict = outcomeNotice(status({ state: 'verified-not-applied', reason: 'stats.go was changed in the editor', diff: '+x' }));
  assert.equal(conflict?.severity, 'warning');
  assert.deepEqual(conflict?.actions, ['Show Output']);
  assert.equal(outcomeNotice(status({ kind: 'test' })), undefined);
  assert.equal(outcomeNotice(status({ state: 'failed', reason: 'boom' })), undefined);
  assert.equal(outcomeNotice(status({ state: 'cancelled' })), undefined);
  assert.equal(outcomeNotice(status({ state: 'running' })), undefined);
});

test('statusView keeps a long setup phase\'s elapsed time visible (it is what changes)', () => {
  const msg = (n: number) => `compiling the Go standard library into the project's build cache (once) · ${n} s`;
  const a = statusView(status({ state: 'running', message: msg(5) })).text;
  const b = statusView(status({ state: 'running', message: msg(10) })).text;
  assert.notEqual(a, b);
  assert.match(b, /… · 10 s$/);
});
