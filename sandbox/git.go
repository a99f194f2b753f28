package sandbox

import "strings"

// gitInitScript gives a workspace copy without .git a minimal repository,
// when git is in the sandbox: `git init` with no template (so no hooks,
// not even samples), remote "origin" at $1 unless it is empty, and one
// empty commit, so that HEAD resolves (go build's VCS stamp fails on a
// repository without commits). Nothing comes from the host's .git: no
// config, no hooks, no fsmonitor, no objects. A failure leaves no .git
// and the command runs as before.
const gitInitScript = `if [ ! -e .git ] && command -v git >/dev/null 2>&1; then
  { git init -q --template= . &&
    { [ -z "$1" ] || git remote add origin "$1"; } &&
    git -c user.name=fixpoint -c user.email=fixpoint@invalid -c commit.gpgsign=false commit -q --allow-empty --no-verify -m "fixpoint sandbox copy"
  } >/dev/null 2>&1 || rm -rf .git
fi
`

// WrapArgs returns args run after gitInitScript in the working directory
// (a test command: testrun.Runner.Git).
func (g *GitInfo) WrapArgs(args []string) []string {
	return append([]string{"sh", "-c", gitInitScript + `shift && exec "$@"`, "sh", g.Remote}, args...)
}

// WrapScript returns a shell script that runs gitInitScript, then script
// (an install step's, which runs the project's lifecycle scripts:
// `prepare: lefthook install`). The remote is single-quoted.
func (g *GitInfo) WrapScript(script string) string {
	quoted := "'" + strings.ReplaceAll(g.Remote, "'", `'\''`) + "'"
	return "set -- " + quoted + "\n" + gitInitScript + "set --\n" + script
}
