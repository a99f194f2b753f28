import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type Item,
  NOT_NOW,
  OPEN_FILES,
  type RunStatus,
  StatusBoard,
  appliedSummary,
  isPrewarmToken,
  notificationTitle,
  needsConfirmation,
  noLinks,
  orderActions,
  outputLines,
  parseRunStatus,
  runIdOfToken,
  statusView,
} from '../src/runs';

const base = { runId: 'run-1', kind: 'fix', message: '', files: [] } as const;
const st = (o: Partial<RunStatus> & Pick<RunStatus, 'state'>): RunStatus => ({ ...base, ...o }) as RunStatus;

test('parseRunStatus validates and cleans the notification', () => {
  const cases: { name: string; in: unknown; want: RunStatus | undefined }[] = [
    { name: 'not an object', in: 'x', want: undefined },
    { name: 'no run id', in: { kind: 'fix', state: 'running' }, want: undefined },
    { name: 'unknown state', in: { runId: 'r', kind: 'fix', state: 'verified' }, want: undefined },
    { name: 'unknown kind', in: { runId: 'r', kind: 'lint', state: 'running' }, want: undefined },
    {
      name: 'full',
      in: {
        runId: 'run-2',
        kind: 'solve',
        state: 'applied',
        message: 'Verified in 2 iterations\nsecond line',
        iteration: 2,
        maxIterations: 6,
        phase: 'applying',
        passing: 3,
        failing: 0,
        files: [{ path: 'stats.go', added: 4, removed: 1 }, { path: '' }, { path: 'new_test.go', added: 9 }],
        diff: '--- a/stats.go\n+++ b/stats.go\n',
      },
      want: {
        runId: 'run-2',
        kind: 'solve',
        state: 'applied',
        message: 'Verified in 2 iterations',
        iteration: 2,
        maxIterations: 6,
        phase: 'applying',
        reason: undefined,
        passing: 3,
        failing: 0,
        files: [
          { path: 'stats.go', added: 4, removed: 1 },
          { path: 'new_test.go', added: 9, removed: 0 },
        ],
        diff: '--- a/stats.go\n+++ b/stats.go\n',
      },
    },
  ];
  for (const c of cases) assert.deepEqual(parseRunStatus(c.in), c.want, c.name);
});

test('statusView: one truthful text per state', () => {
  const cases: { name: string; in: RunStatus; kind: string; text: string; tooltip?: RegExp }[] = [
    {
      name: 'running',
      in: st({ state: 'running', iteration: 2, maxIterations: 6, phase: 'running tests', message: 'Iteration 2/6 · running tests' }),
      kind: 'running',
      text: '$(sync~spin) fixpoint 2/6 · running tests',
      tooltip: /click to cancel$/,
    },
    {
      name: 'verified and applied',
      in: st({ state: 'applied', passing: 3, files: [{ path: 'stats.go', added: 4, removed: 1 }] }),
      kind: 'applied',
      text: '$(pass) fixpoint: verified, applied',
      tooltip: /changed stats\.go \(\+4 −1\); 3 tests passing/,
    },
    {
      name: 'verified, not applied, with why',
      in: st({ state: 'verified-not-applied', reason: 'you declined the edit' }),
      kind: 'not-applied',
      text: '$(warning) fixpoint: verified, not applied (you declined the edit)',
    },
    {
      name: 'Run Tests found failing tests: not a failed run',
      in: st({ kind: 'test', state: 'tests-failing', failing: 2, passing: 5 }),
      kind: 'tests-failing',
      text: '$(error) fixpoint: 2 tests failing',
    },
    { name: 'one failing test', in: st({ kind: 'test', state: 'tests-failing', failing: 1 }), kind: 'tests-failing', text: '$(error) fixpoint: 1 test failing' },
    { name: 'Run Tests all pass', in: st({ kind: 'test', state: 'applied', passing: 5 }), kind: 'verified', text: '$(pass) fixpoint: 5 tests passing' },
    {
      name: 'run failed, with why',
      in: st({ state: 'failed', reason: 'no sandbox backend answers' }),
      kind: 'failed',
      text: '$(error) fixpoint: run failed (no sandbox backend answers)',
    },
    {
      name: 'a long why is clipped in the text, whole in the tooltip',
      in: st({ state: 'failed', reason: 'not verified after 6 iterations: TestMedian still fails at stats_test.go:10' }),
      kind: 'failed',
      text: '$(error) fixpoint: run failed (not verified after 6 iterations: TestMe…)',
      tooltip: /TestMedian still fails at stats_test\.go:10/,
    },
    { name: 'cancelled', in: st({ state: 'cancelled' }), kind: 'cancelled', text: '$(circle-slash) fixpoint: cancelled' },
    {
      name: 'before the first iteration the server sends 0/0',
      in: st({ state: 'running', iteration: 0, maxIterations: 0, phase: 'plan', message: 'Planning' }),
      kind: 'running',
      text: '$(sync~spin) fixpoint · Planning',
    },
    {
      name: 'applied with no test count',
      in: st({ state: 'applied', passing: 0, failing: 0, files: [{ path: 'a.go', added: 1, removed: 0 }] }),
      kind: 'applied',
      text: '$(pass) fixpoint: verified, applied',
      tooltip: /changed a\.go \(\+1 −0\) — click/,
    },
  ];
  for (const c of cases) {
    const v = statusView(c.in);
    assert.equal(v.kind, c.kind, c.name);
    assert.equal(v.text, c.text, c.name);
    if (c.tooltip) assert.match(v.tooltip, c.tooltip, c.name);
  }
});

test('appliedSummary names the files (+/−) and the tests passing, with Open Files first', () => {
  const s = st({
    kind: 'solve',
    state: 'applied',
    passing: 4,
    files: [
      { path: 'stats.go', added: 8, removed: 0 },
      { path: 'stats_test.go', added: 6, removed: 0 },
    ],
  });
  assert.deepEqual(appliedSummary(s), {
    message: 'fixpoint: verified and applied — 2 files changed: stats.go (+8 −0), stats_test.go (+6 −0); 4 tests passing.',
    actions: [OPEN_FILES, 'Show Output'],
  });
  for (const state of ['running', 'verified-not-applied', 'failed', 'cancelled', 'tests-failing'] as const) {
    assert.equal(appliedSummary(st({ state })), undefined, state);
  }
  assert.equal(appliedSummary(st({ kind: 'test', state: 'applied' })), undefined, 'Run Tests applies nothing');
});

test('outputLines: the final status with its diff; nothing while running', () => {
  assert.deepEqual(outputLines(st({ state: 'running', diff: 'x' })), []);
  const diff = '--- a/stats.go\n+++ b/stats.go\n@@ -1 +1 @@\n-a\n+b\n';
  assert.deepEqual(outputLines(st({ state: 'applied', message: 'Verified', files: [{ path: 'stats.go', added: 1, removed: 1 }], diff })), [
    '[run-1] Fix until tests pass: fixpoint: verified, applied — Verified',
    '[run-1] files: stats.go (+1 −1)',
    '--- a/stats.go',
    '+++ b/stats.go',
    '@@ -1 +1 @@',
    '-a',
    '+b',
  ]);
});

test('orderActions: an unverified apply is never the primary (first) button', () => {
  const cases: { in: string[]; want: string[] }[] = [
    { in: ['Apply best attempt', 'Show log'], want: ['Show log', 'Apply best attempt'] },
    { in: ['Apply best attempt'], want: [NOT_NOW, 'Apply best attempt'] },
    { in: ['Allow', 'Deny'], want: ['Allow', 'Deny'] },
    { in: ['Apply unverified edit', 'Retry', 'Show log'], want: ['Retry', 'Show log', 'Apply unverified edit'] },
    { in: [], want: [] },
  ];
  for (const c of cases) assert.deepEqual(orderActions(c.in), c.want, JSON.stringify(c.in));
});

test('runIdOfToken', () => {
  assert.equal(runIdOfToken('fixpoint/run-3'), 'run-3');
  assert.equal(runIdOfToken(7), '7');
});

class FakeItem implements Item {
  text = '';
  tooltip = '';
  command = '';
  shown = false;
  disposed = false;
  show() {
    this.shown = true;
  }
  hide() {
    this.shown = false;
  }
  dispose() {
    this.disposed = true;
    this.shown = false;
  }
}

function board() {
  const items: FakeItem[] = [];
  const b = new StatusBoard(() => {
    const it = new FakeItem();
    items.push(it);
    return it;
  });
  const visible = () => items.filter((i) => i.shown && !i.disposed);
  return { b, items, visible };
}

test('StatusBoard: one status bar item per run, whether driven by $/progress, $/fixpoint/status or both', () => {
  const { b, visible } = board();
  assert.deepEqual(visible().map((i) => i.text), ['$(check-all) fixpoint'], 'idle');

  // The server sends both for one run: progress on token fixpoint/run-1, status for run-1.
  b.progress('fixpoint/run-1', { kind: 'begin', title: 'Fix until tests pass', cancellable: true });
  b.status(st({ state: 'running', iteration: 1, maxIterations: 6, phase: 'planning' }));
  b.progress('fixpoint/run-1', { kind: 'report', message: 'Iteration 1/6 · planning' });
  assert.deepEqual(visible().map((i) => i.text), ['$(sync~spin) fixpoint 1/6 · planning']);
  assert.equal(visible()[0].command, 'fixpoint.cancelRun');
  assert.equal(b.active(), 1);

  // Progress ending does not override the truthful final status.
  b.status(st({ state: 'verified-not-applied', reason: 'the document changed' }));
  b.progress('fixpoint/run-1', { kind: 'end', message: 'Verified' });
  assert.deepEqual(visible().map((i) => i.text), ['$(warning) fixpoint: verified, not applied (the document changed)']);
  assert.equal(visible()[0].command, 'fixpoint.showOutput');
  assert.equal(b.active(), 0);

  // The next run replaces the finished run's item.
  b.status(st({ runId: 'run-2', kind: 'test', state: 'running' }));
  assert.equal(visible().length, 1);
  // A second folder's run at the same time gets its own.
  b.status(st({ runId: 'run-3', state: 'running' }));
  assert.equal(visible().length, 2);
  assert.equal(b.active(), 2);

  b.reset();
  assert.deepEqual(visible().map((i) => i.text), ['$(check-all) fixpoint']);
});

test('StatusBoard: an older server without $/fixpoint/status still gets a status from $/progress', () => {
  const { b, visible } = board();
  b.progress('fixpoint/run-1', { kind: 'begin', title: 'Run tests' });
  b.progress('fixpoint/run-1', { kind: 'report', message: 'Iteration 1/1 · running tests' });
  assert.deepEqual(visible().map((i) => i.text), ['$(sync~spin) fixpoint 1/1 · running tests']);
  b.progress('fixpoint/run-1', { kind: 'end', message: 'Verified' });
  assert.deepEqual(visible().map((i) => i.text), ['$(pass) fixpoint: verified']);
});

test('needsConfirmation: only an edit with an annotation that needs confirmation', () => {
  const cases: { name: string; edit: unknown; want: boolean }[] = [
    { name: 'no annotations', edit: { documentChanges: [] }, want: false },
    { name: 'annotation without confirmation', edit: { changeAnnotations: { fixpoint: { label: 'x', needsConfirmation: false } } }, want: false },
    { name: 'needs confirmation', edit: { changeAnnotations: { fixpoint: { label: 'Fix', needsConfirmation: true } } }, want: true },
    { name: 'not an object', edit: null, want: false },
  ];
  for (const c of cases) assert.equal(needsConfirmation(c.edit), c.want, c.name);
});

test('appliedSummary: a file named like a markdown link is no link in the notification', () => {
  const s = st({ state: 'applied', files: [{ path: '[Open](command:workbench.action.terminal.sendSequence)', added: 1, removed: 0 }] });
  const m = appliedSummary(s)?.message ?? '';
  assert.ok(!m.includes(']('), m);
  assert.ok(m.includes('\\[Open\\]\\(command:'), m);
  assert.equal(noLinks('plain (1 file) a_b.go'), 'plain (1 file) a_b.go');
  assert.equal(noLinks('<img src=x> \\'), '\\<img src=x\\> \\\\');
});

test('notification titles carry one "fixpoint: " prefix', () => {
  assert.equal(notificationTitle('fixpoint: Fix until tests pass'), 'fixpoint: Fix until tests pass');
  assert.equal(notificationTitle('Run tests'), 'fixpoint: Run tests');
  assert.equal(notificationTitle(undefined), 'fixpoint: run');
});

test('a prewarm token is not a run: the final status stays', () => {
  assert.equal(isPrewarmToken('fixpoint/prewarm-2'), true);
  assert.equal(isPrewarmToken('fixpoint/run-3'), false);
  assert.equal(isPrewarmToken(7), false);
});
