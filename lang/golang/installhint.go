package golang

import (
	"fmt"
	"regexp"
	"strings"
)

// proxyMissingRe is go's report of a module proxy that answered that it
// does not have a module version: `MOD@VER: reading URL: 403 Forbidden`
// (or 404 / 410) followed by `server response: …` with the proxy's reason.
// proxy.golang.org answers 403 "This module version is not available."
// for a version it has never had or no longer serves.
var proxyMissingRe = regexp.MustCompile(`(?s)(\S+@\S+): reading (\S+): (?:403|404|410) [A-Za-z ]+\s+server response:\s*([^\n]*(?:not available|not found|unknown revision|invalid version|no matching versions|gone)[^\n]*)`)

// InstallHint reads a failed `go mod download` ([lang.InstallHints]): a
// module proxy's 403/404/410 for a version it does not have is not a
// registry asking for credentials (which is what a bare 403 would be
// read as), but a requirement that names a version the proxy cannot
// serve.
func (Language) InstallHint(output string) string {
	m := proxyMissingRe.FindStringSubmatch(output)
	if m == nil {
		return ""
	}
	host := m[2]
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	return fmt.Sprintf("The module proxy %s has no %s (%q): no credentials would change that. Check that version in go.mod or go.sum (a typo, a version never published or withdrawn, a replaced fork); a module only your own proxy or VCS serves needs GOPROXY or GOPRIVATE set in fixpoint's environment, which the setup step reads.", host, m[1], strings.TrimSpace(m[3]))
}
