const test = require('node:test');
const { describe, it } = require('node:test');
const assert = require('node:assert');
const { add, parse } = require('../calc.js');

test('add works', () => {
  assert.strictEqual(add(1, 2), 3);
});

test('add zero', () => {
  assert.strictEqual(add(2, 0), 2);
});

test('deep objects', () => {
  assert.deepStrictEqual({ a: 1, b: [1, 2] }, { a: 1, b: [1, 3] });
});

test('parse throws', () => {
  parse('x');
});

test('skipped', { skip: 'not ready' }, () => {});

test('todo', { todo: true }, () => {});

describe('calc', () => {
  it('adds in a suite', () => {
    assert.equal(add(2, 2), 4);
  });
  it('subtracts', () => {
    assert.equal(2 - 2, 0);
  });
});

test('with subtests', async (t) => {
  await t.test('sub ok', () => {
    assert.ok(true);
  });
  await t.test('sub fails', () => {
    assert.strictEqual(add(5, 5), 10, 'five plus five');
  });
});
