'use strict';
const { double } = require('@shape/util');
exports.quadruple = (n) => double(double(n));
