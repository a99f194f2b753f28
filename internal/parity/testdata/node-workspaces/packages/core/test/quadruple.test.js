'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { quadruple } = require('..');

test('quadruples through the util workspace', () => assert.strictEqual(quadruple(3), 12));
