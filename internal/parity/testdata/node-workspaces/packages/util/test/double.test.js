'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { double } = require('..');

test('doubles', () => assert.strictEqual(double(2), 4));
test('doubles zero', () => assert.strictEqual(double(0), 0));
