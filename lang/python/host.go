package python

import "github.com/fixpoint-dev/fixpoint/lang"

var _ lang.HostPackages = Language{}

// HostPackages implements lang.HostPackages: the host and bwrap backends
// run the host's /usr/bin/python3, so its tests need Debian's pytest (the
// runner) and hypothesis (property tests, as in the image); freezegun is
// what the realworld corpus's native runs had and the image has (bwrap's
// parity run of itsdangerous imports it from the host). None installs a
// command of its own, so each is probed by importing it.
func (Language) HostPackages() []lang.HostPackage {
	probe := func(module string) []string {
		return []string{"/usr/bin/python3", "-c", "import " + module}
	}
	return []lang.HostPackage{
		{Command: "python3", Package: "python3-pytest", Probe: probe("pytest")},
		{Command: "python3", Package: "python3-hypothesis", Probe: probe("hypothesis")},
		{Command: "python3", Package: "python3-freezegun", Probe: probe("freezegun")},
	}
}
