'use strict';
// The step a composed test script runs after the runner ("mocha && npm run lint").
const fs = require('fs');
const src = fs.readFileSync(require.resolve('../app.js'), 'utf8');
if (/\t/.test(src)) {
  console.error('app.js: tabs');
  process.exit(1);
}
