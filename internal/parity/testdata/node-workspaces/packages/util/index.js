'use strict';
exports.double = (n) => n * 2;
