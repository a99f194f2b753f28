package node

import (
	"slices"
	"testing"
)

// The forms JavaScript code declares functions in: declarations, functions
// assigned to members (Express-style proto.handle = function…), and class
// methods; statements that look like methods are not.
func TestSymbolsMembersAndMethods(t *testing.T) {
	src := `'use strict'
var proto = module.exports = function (options) {}
proto.handle = function handle(req, res, out) {
  if (req.url) {
    next()
  }
}
exports.parse = (str, options) => {
}
Router.prototype.route = async function route(path) {}
class Response extends Base {
  constructor(opts) {
    super(opts)
  }
  async send(body) {
    for (const k of keys) {
    }
  }
  static get json() {
  }
}
function compile(src) {}
  render(x) {
  }
`
	got := Language{}.Symbols("lib/router.js", []byte(src))
	want := []string{"function proto.handle", "function exports.parse", "function Router.prototype.route", "class Response",
		"method Response.constructor", "method Response.send", "method Response.json", "function compile"}
	if !slices.Equal(got, want) {
		t.Errorf("Symbols =\n%q\nwant\n%q", got, want)
	}
}
