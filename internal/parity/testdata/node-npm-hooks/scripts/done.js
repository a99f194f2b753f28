'use strict';
// A posttest that checks what the tests left behind.
const fs = require('node:fs');

if (!fs.existsSync('test/generated/cases.json')) {
  console.error('posttest: test/generated/cases.json is gone');
  process.exit(3);
}
