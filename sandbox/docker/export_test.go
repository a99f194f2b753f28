package docker

// ProjectHash is projectHash, for tests that clean up a project's volumes.
var ProjectHash = projectHash

// ToolVolumes are the volumes holding the session's host tool copies.
func (s *Session) ToolVolumes() []string {
	var out []string
	for _, m := range s.toolMounts {
		out = append(out, m.Source)
	}
	return out
}
