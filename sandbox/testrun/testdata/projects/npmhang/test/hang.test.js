const { test, describe } = require('node:test');
const assert = require('node:assert');
test('passes', () => {});
test('fails', () => { assert.strictEqual(1, 2); });
describe('group', () => {
  test('inner passes', () => {});
  test('hangs', () => new Promise(() => { setInterval(() => {}, 1000); }));
});
test('after', () => {});
