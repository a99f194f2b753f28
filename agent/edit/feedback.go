package edit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
)

// FormatExample is the block format, as shown to models.
const FormatExample = "path/to/file.go\n<<<<<<< SEARCH\nexact existing lines\n=======\nreplacement lines\n>>>>>>> REPLACE\n"

// FormatFeedback turns an error from Parse or Apply into a message for the
// model: what failed, what the file actually contains near the closest
// match, and how to resend. It says that none of the reply's edits was
// applied.
func FormatFeedback(err error) string {
	if err == nil {
		return ""
	}
	var b strings.Builder
	var pe *ParseError
	var ae *ApplyError
	switch {
	case errors.As(err, &pe):
		fmt.Fprintf(&b, "Your reply's edit blocks could not be read, so none of them was applied: %s\n", sentence(pe.Error()))
		fmt.Fprintf(&b, "Write every edit in exactly this format, with the file path on the line before each block:\n\n%s", FormatExample)
	case errors.As(err, &ae):
		fmt.Fprintf(&b, "None of your reply's edits was applied, because %s\n", sentence(ae.Reason))
		// Apply never quotes a secret file; this guards the feedback too.
		if ae.Nearby != "" && !redact.IsSecretPath(ae.Path) {
			fmt.Fprintf(&b, "\nThe file contains (line numbers are not part of the file):\n```\n%s```\n", ae.Nearby)
		}
		switch {
		case errors.Is(ae.Err, ErrSecret):
			b.WriteString("\nfixpoint keeps secret files (.env files, keys, credentials) away from the model. Solve the task without reading or changing them.\n")
		case errors.Is(ae.Err, ErrProtected):
			b.WriteString("\nThat file configures fixpoint, the sandbox, CI, git hooks or an editor, which the model may not change. Solve the task in the project's code without changing it.\n")
		case errors.Is(ae.Err, ErrOutside):
			b.WriteString("\nEdit only regular files inside the workspace, with paths relative to its root: never through a symlink, never inside a git directory.\n")
		default:
			b.WriteString("\nResend all the edits of that reply. Copy each SEARCH part exactly from the current file, including indentation, with enough lines to match exactly one place.\n")
		}
	default:
		fmt.Fprintf(&b, "None of your reply's edits was applied: %s\n", sentence(err.Error()))
	}
	return b.String()
}

// sentence ends s with a period unless it ends with punctuation already.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}
