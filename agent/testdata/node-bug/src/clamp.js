'use strict';

// clamp returns x limited to the closed interval [lo, hi].
function clamp(x, lo, hi) {
  if (lo > hi) {
    throw new RangeError('lo must not exceed hi');
  }
  return Math.max(lo, Math.min(x, lo));
}

module.exports = { clamp };
