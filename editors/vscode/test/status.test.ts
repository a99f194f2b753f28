import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IDLE, type ProgressValue, type Status, clickCommand, nextStatus, parseIteration } from '../src/status';

test('parseIteration', () => {
  const cases: { in: string | undefined; want: ReturnType<typeof parseIteration> }[] = [
    { in: 'Iteration 2/6 · running tests · 3 failed', want: { iteration: 2, max: 6, rest: 'running tests · 3 failed' } },
    { in: 'iteration 10 / 12', want: { iteration: 10, max: 12, rest: '' } },
    { in: 'planning · Iteration 1/6', want: { iteration: 1, max: 6, rest: 'planning' } },
    { in: 'running tests', want: undefined },
    { in: undefined, want: undefined },
  ];
  for (const c of cases) assert.deepEqual(parseIteration(c.in), c.want, `parseIteration(${JSON.stringify(c.in)})`);
});

test('a run goes idle → running n/N → verified', () => {
  const steps: { value: ProgressValue; kind: Status['kind']; text: string }[] = [
    { value: { kind: 'begin', title: 'Fix until tests pass', cancellable: true }, kind: 'running', text: '$(sync~spin) fixpoint' },
    { value: { kind: 'report', message: 'Iteration 1/6 · planning' }, kind: 'running', text: '$(sync~spin) fixpoint 1/6 · planning' },
    {
      value: { kind: 'report', message: 'Iteration 2/6 · running tests · 3 failed' },
      kind: 'running',
      text: '$(sync~spin) fixpoint 2/6 · running tests · 3 failed',
    },
    // A report without an iteration keeps the last one.
    { value: { kind: 'report', message: 'applying edit' }, kind: 'running', text: '$(sync~spin) fixpoint 2/6 · applying edit' },
    { value: { kind: 'end', message: 'Verified in 2 iterations' }, kind: 'verified', text: '$(pass) fixpoint: verified' },
  ];
  let s = IDLE;
  for (const st of steps) {
    s = nextStatus(s, st.value);
    assert.equal(s.kind, st.kind, JSON.stringify(st.value));
    assert.equal(s.text, st.text, JSON.stringify(st.value));
  }
  assert.match(s.tooltip, /Verified in 2 iterations \(2\/6\)/);
});

test('end messages', () => {
  const cases: { msg: string | undefined; kind: Status['kind'] }[] = [
    // What the server sends.
    { msg: 'Verified', kind: 'verified' },
    { msg: 'Not verified: max iterations reached', kind: 'failed' },
    { msg: 'Cancelled', kind: 'idle' },
    { msg: 'Failed: no sandbox backend answers', kind: 'failed' },
    { msg: '5 passed', kind: 'verified' },
    { msg: '3 passed, 1 failed', kind: 'failed' },
    { msg: '4 passed, exit code 2', kind: 'failed' },
    { msg: '0 passed, timed out', kind: 'failed' },
    { msg: 'no test report', kind: 'idle' },
    { msg: 'Not verified after 6 iterations: 2 tests still fail', kind: 'failed' },
    { msg: 'token budget exhausted', kind: 'failed' },
    { msg: 'error: no sandbox backend', kind: 'failed' },
    { msg: 'Verified in 3 iterations', kind: 'verified' },
    { msg: 'all 12 tests passed', kind: 'verified' },
    { msg: undefined, kind: 'verified' },
    { msg: 'Canceled', kind: 'idle' },
    { msg: 'cancelled by the user', kind: 'idle' },
    { msg: 'something else', kind: 'idle' },
  ];
  for (const c of cases) {
    const s = nextStatus({ ...IDLE, kind: 'running' }, { kind: 'end', message: c.msg });
    assert.equal(s.kind, c.kind, `end ${JSON.stringify(c.msg)}`);
  }
});

test('the status bar cancels while running and shows the output otherwise', () => {
  const running = nextStatus(IDLE, { kind: 'begin', title: 'Solve goal' });
  assert.equal(clickCommand(running), 'fixpoint.cancelRun');
  assert.match(running.tooltip, /^Solve goal — click to cancel$/);
  assert.equal(clickCommand(IDLE), 'fixpoint.showOutput');
  assert.equal(clickCommand(nextStatus(running, { kind: 'end', message: 'Not verified' })), 'fixpoint.showOutput');
});
