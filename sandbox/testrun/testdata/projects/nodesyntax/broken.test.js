const test = require('node:test');

test('broken', () => {
  if (true {
  }
});
