package lang

import (
	"regexp"
	"strings"
)

var (
	// Paths: absolute, home-relative or ./relative, with an extension or a
	// slash inside; replaced by the file name.
	pathRE   = regexp.MustCompile(`(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[/\\][\w.@+~-]+)+[/\\]([\w.@+-]+)([/\\]?)`)
	relRE    = regexp.MustCompile(`\.{1,2}/([\w.@+-]+)`)
	lineColR = regexp.MustCompile(`(\.\w{1,5})(?::\d+){1,2}\b`)
	hexRE    = regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`)
	// Timestamps before durations and numbers.
	timeRE  = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b|\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b`)
	durRE   = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)\b`)
	ipRE    = regexp.MustCompile(`\b(\d{1,3}(?:\.\d{1,3}){3}|localhost|\[::1?\]):\d{2,5}\b`)
	uuidRE  = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
	longHex = regexp.MustCompile(`\b[0-9a-f]{12,}\b`)
	numRE   = regexp.MustCompile(`(^|[^\w.])-?\d+(?:\.\d+)?\b`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// NormLine strips what varies between two occurrences of the same error
// in a line of failure output: absolute and temporary paths (down to the
// file name), line and column numbers, hex addresses, timestamps,
// durations, ports, UUIDs and other numbers.
func NormLine(s string) string {
	s = timeRE.ReplaceAllString(s, "<time>")
	s = uuidRE.ReplaceAllString(s, "<uuid>")
	s = ipRE.ReplaceAllString(s, "<host>:<port>")
	s = pathRE.ReplaceAllStringFunc(s, func(p string) string {
		if strings.HasSuffix(p, "/") || strings.HasSuffix(p, "\\") {
			return "<dir>" // a directory: which one varies between checkouts
		}
		return pathRE.ReplaceAllString(p, "$1")
	})
	s = relRE.ReplaceAllString(s, "$1")
	s = lineColR.ReplaceAllString(s, "$1")
	s = hexRE.ReplaceAllString(s, "0x?")
	s = longHex.ReplaceAllString(s, "<hex>")
	s = durRE.ReplaceAllString(s, "<dur>")
	s = numRE.ReplaceAllString(s, "${1}N")
	return strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
}
