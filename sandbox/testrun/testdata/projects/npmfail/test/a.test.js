const test = require('node:test');
const assert = require('node:assert');

test('equal numbers', () => {
  assert.equal(1, 2);
});
