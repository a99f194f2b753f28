'use strict';

// sum adds the numbers of a list.
function sum(list) {
  return list.reduce((a, b) => a + b, 0);
}

module.exports = { sum };
