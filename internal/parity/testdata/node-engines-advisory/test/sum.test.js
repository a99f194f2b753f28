// engines.node asks for >=22, as jshttp/content-type does, while npm only
// warns about it: a developer on Node 20 runs these tests all the same.
const test = require('node:test');
const assert = require('node:assert');

test('adds', () => {
  assert.strictEqual(1 + 2, 3);
});

test('joins', () => {
  assert.strictEqual(['a', 'b'].join('-'), 'a-b');
});

test('later', { skip: 'not yet' }, () => {});
