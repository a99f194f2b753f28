package node

import (
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// jsRequireRe is a declaration whose value is a require() (const x =
// require('x'), const {a, b} = require('./y')) or a TypeScript import
// assignment (import x = require('x')).
var jsRequireRe = regexp.MustCompile(`^(?:(?:const|let|var)\s+[\w${}\s,:]+|import\s+[\w$]+)\s*=\s*require\(`)

// HeaderLines is the number of lines a JavaScript or TypeScript module's
// header takes: the shebang, comments, 'use strict', and its import,
// export-from and require statements, up to the last of them. 0 for other
// files.
func (Language) HeaderLines(p string, data []byte) int {
	if !isSource(p) {
		return 0
	}
	return lang.ScanHeader(data, func(ls []string, i int, t string) (int, bool) {
		switch {
		case strings.HasPrefix(t, "#!"):
			return i, true
		case t == "'use strict';" || t == `"use strict";` || t == "'use strict'" || t == `"use strict"`:
			return i, true
		case strings.HasPrefix(t, "import ") || strings.HasPrefix(t, "import{") || strings.HasPrefix(t, "export ") && (strings.Contains(t, " from") || strings.HasSuffix(t, "{")) || strings.HasPrefix(t, "export *") ||
			(strings.HasPrefix(t, "const ") || strings.HasPrefix(t, "let ") || strings.HasPrefix(t, "var ")) && (jsRequireRe.MatchString(t) || strings.HasSuffix(t, "{")):
			// A statement over several lines (import {\n a,\n} from 'x')
			// runs to the line that names its module.
			j := i
			stmt := t
			for strings.Count(stmt, "{") > strings.Count(stmt, "}") && j+1 < len(ls) && j-i < 200 {
				j++
				stmt += " " + strings.TrimSpace(ls[j])
			}
			return j, importStmt(stmt)
		}
		return i, false
	})
}

// importStmt reports whether stmt (one statement, its lines joined) is an
// import, an export-from or a require.
func importStmt(stmt string) bool {
	if strings.HasPrefix(stmt, "export ") {
		return strings.Contains(stmt, " from ") || strings.Contains(stmt, "}from")
	}
	if strings.HasPrefix(stmt, "import") && !strings.HasPrefix(stmt, "import(") {
		return true
	}
	return jsRequireRe.MatchString(stmt) || strings.Contains(stmt, "= require(")
}

// TestSetupNames are the hooks mocha, jest, vitest, node:test and ava run
// before a test (mocha's TDD interface: setup, suiteSetup).
func (Language) TestSetupNames() []string {
	return []string{"beforeEach", "before", "beforeAll", "setup", "suiteSetup"}
}
