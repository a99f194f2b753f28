'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { clamp } = require('../src/clamp');

test('inside the interval', () => {
  assert.strictEqual(clamp(5, 0, 10), 5);
});

test('below the interval', () => {
  assert.strictEqual(clamp(-3, 0, 10), 0);
});

test('above the interval', () => {
  assert.strictEqual(clamp(42, 0, 10), 10);
});

test('bad interval', () => {
  assert.throws(() => clamp(1, 2, 1), RangeError);
});
