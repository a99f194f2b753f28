import { describe, expect, it } from 'vitest';
import { sum } from './sum';

describe('sum', () => {
  it('adds', () => {
    expect(sum([1, 2, 3])).toBe(6);
  });
  it('is zero for nothing', () => {
    expect(sum([])).toBe(0);
  });
  it.todo('handles NaN');
});
