'use strict';
// A linter as a pretest runs one: every source file ends in a newline
// and has no tab.
const fs = require('node:fs');
const path = require('node:path');

let bad = 0;
for (const f of fs.readdirSync('lib')) {
  const text = fs.readFileSync(path.join('lib', f), 'utf8');
  if (!text.endsWith('\n')) {
    console.log(`lib/${f}: missing final newline`);
    bad++;
  }
  if (text.includes('\t')) {
    console.log(`lib/${f}: tab character`);
    bad++;
  }
}
if (bad > 0) {
  console.log(`lint: ${bad} problem(s)`);
  process.exit(2);
}
