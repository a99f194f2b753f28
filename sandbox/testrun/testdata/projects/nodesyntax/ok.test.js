const test = require('node:test');

test('ok', () => {});
