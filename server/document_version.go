package server

// DocumentVersion returns the version of the open document at uri, as the
// client's last didOpen or didChange set it, and whether it is open. The
// load benchmark (internal/bench/lsp) checks with it that every change it
// sent was applied.
func (s *Server) DocumentVersion(uri string) (int32, bool) {
	d := s.docs.get(uri)
	if d == nil {
		return 0, false
	}
	return d.version, true
}
