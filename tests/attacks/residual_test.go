package attacks

// residual lists the breaches that are known and not yet closed, by case
// and invariant, each with the reason; SECURITY.md says the same. A listed
// breach is reported (the table says RESIDUAL, the log says why) instead of
// failing the suite; any other breach of the same case still fails it, and
// a listed one that no longer happens is reported as held. Keep this list
// short and honest: a case goes here only with a reason a user can read.
var residual = map[string]map[string]string{
	"tuning/config-devcontainer-postcreate": {
		"no-exfil": "the project's own install step (devcontainer postCreateCommand, as package.json's postinstall) runs with network; it cannot reach the host's loopback, but it reaches host services listening on the docker bridge address or on any host address through slirp4netns (SECURITY.md: the setup phase)",
	},
	"tuning/config-devcontainer-image": {
		"no-exfil": "as config-devcontainer-postcreate: the image's build runs the project's own steps with network (SECURITY.md: the setup phase)",
	},
}

// residualReason returns why a breach of inv in the named case is known,
// or "".
func residualReason(name, inv string) string { return residual[name][inv] }
