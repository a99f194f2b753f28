'use strict';
// Generates the data the tests read, as a preunit script does.
const fs = require('node:fs');

fs.mkdirSync('test/generated', { recursive: true });
fs.writeFileSync('test/generated/cases.json', JSON.stringify([[1, 2, 3], [10, -10, 0]]));
