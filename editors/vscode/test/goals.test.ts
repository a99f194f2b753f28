import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_RECENT_GOALS, rememberGoal, validateGoal } from '../src/goals';

test('rememberGoal', () => {
  const cases: { name: string; recent: string[]; goal: string; max?: number; want: string[] }[] = [
    { name: 'first', recent: [], goal: 'add a --json flag', want: ['add a --json flag'] },
    { name: 'newest first', recent: ['a', 'b'], goal: 'c', want: ['c', 'a', 'b'] },
    { name: 'moves a repeat to the front', recent: ['a', 'b', 'c'], goal: 'c', want: ['c', 'a', 'b'] },
    { name: 'trims', recent: ['a'], goal: '  a  ', want: ['a'] },
    { name: 'ignores blank', recent: ['a', ' '], goal: '   ', want: ['a'] },
    { name: 'caps', recent: ['a', 'b', 'c'], goal: 'd', max: 2, want: ['d', 'a'] },
  ];
  for (const c of cases) {
    assert.deepEqual(rememberGoal(c.recent, c.goal, c.max), c.want, c.name);
  }
  const many = Array.from({ length: 30 }, (_, i) => `goal ${i}`);
  assert.equal(rememberGoal(many, 'new').length, MAX_RECENT_GOALS);
});

test('validateGoal', () => {
  assert.match(validateGoal('  ') ?? '', /Describe the change/);
  assert.match(validateGoal('x'.repeat(2001)) ?? '', /very long/);
  assert.equal(validateGoal('make TestParse pass'), undefined);
});
