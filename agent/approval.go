package agent

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// Approval is what a reply's edit needs the user to allow before it may
// run: dependencies that are not on the allow-list, and changes to what
// the setup phase executes or downloads (lang.SetupChanges). The setup
// phase has network, so both reach the package registries; nothing else
// the model writes does. Options.Approve is asked with it; the question
// and the refusal are written here once ([Approval.Question],
// [Approval.Refusal]) for the CLI and the editor.
type Approval struct {
	Deps  []string           // "npm:left-pad", "python:requests"
	Setup []lang.SetupChange // what the edit changes in the setup phase
}

// Items lists what is to be allowed, one line each.
func (a Approval) Items() []string {
	var out []string
	if len(a.Deps) > 0 {
		names := make([]string, len(a.Deps))
		for i, d := range a.Deps {
			names[i] = d
			if q := strconv.Quote(d); q[1:len(q)-1] != d {
				names[i] = q // a name from a model-written manifest, with control characters
			}
		}
		out = append(out, "new dependencies: "+strings.Join(names, ", "))
	}
	for _, c := range a.Setup {
		out = append(out, c.String())
	}
	return out
}

// Question is the honest question to the user (without the answer
// choices): what would run, and that it runs with network.
func (a Approval) Question() string {
	var b strings.Builder
	b.WriteString("The model's edit changes what fixpoint's setup phase downloads or runs. The setup phase has network access (the package registries, through your proxy if one is set):\n")
	for _, it := range a.Items() {
		b.WriteString("  - " + it + "\n")
	}
	b.WriteString("If you allow it, the edit runs: the setup phase may install it during this run (with network; npm's install scripts off), and once the edit is written, every later setup (`fixpoint test`, an editor opening this folder) runs it in full, with network. If you refuse, the model is told to do without.")
	return b.String()
}

// Refusal is the message for a user who was not asked (no terminal, no
// editor answer): what was refused and how to allow it (how is the
// caller's: a flag, answering the editor's question).
func (a Approval) Refusal(how string) string {
	return fmt.Sprintf("refused the model's edit, which changes what the setup phase downloads or runs (with network):\n  - %s\n%s", strings.Join(a.Items(), "\n  - "), how)
}

// feedback tells the model that the edit was refused.
func (a Approval) feedback() string {
	var b strings.Builder
	b.WriteString("The reply was refused: the user did not allow these changes to what the setup phase (which has network) downloads or runs:\n")
	for _, it := range a.Items() {
		b.WriteString("- " + it + "\n")
	}
	b.WriteString("The test sandbox has no network. Solve the task with what the project already has, without changing install scripts, build scripts, dependency sources or versions (or the user can add plain dependencies to [policy] allow_deps).")
	return b.String()
}
