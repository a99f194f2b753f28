package server

import "regexp"

// secretRE matches values that look like API keys or bearer tokens.
var secretRE = regexp.MustCompile(`(?i)(sk-[a-z0-9_\-]{16,}|gh[pousr]_[a-z0-9]{20,}|xox[abposr]-[a-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|bearer\s+[a-z0-9._\-]{16,}|(?:api[_-]?key|token|secret|password)\s*[=:]\s*["']?[^\s"']{8,})`)

// redact masks secrets in text sent to the client (window/logMessage,
// showMessage). It stands in until agent/redact lands.
func redact(s string) string { return secretRE.ReplaceAllString(s, "[REDACTED]") }
