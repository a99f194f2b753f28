package bwrap

// StdSeed exposes stdSeed to the external tests.
func (b *Backend) StdSeed(labels map[string]string) string { return b.stdSeed(labels) }
