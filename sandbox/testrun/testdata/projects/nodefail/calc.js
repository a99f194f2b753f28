function add(a, b) {
  return a - b;
}

function parse(s) {
  if (Number.isNaN(Number(s))) {
    throw new TypeError(`not a number: ${s}`);
  }
  return Number(s);
}

module.exports = { add, parse };
