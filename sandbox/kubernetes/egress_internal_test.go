package kubernetes

import (
	"net"
	"testing"
)

// TestPublicIP: the setup relay dials no address of this machine or its
// link: loopback, link-local (169.254.169.254 is the cloud metadata
// service), unspecified or multicast, in IPv4, IPv6 and IPv4-mapped IPv6
// spellings; nor a metadata service outside link-local (AWS's IPv6
// fd00:ec2::254, Alibaba's 100.100.100.200); ordinary and other private
// addresses are dialled (held-out mutant sandbox-egress-link-local).
func TestPublicIP(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1",
		"169.254.169.254", "169.254.170.2", "::ffff:169.254.169.254", "fe80::1", "fe80::a9fe:a9fe",
		"0.0.0.0", "::", "::ffff:0.0.0.0",
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff01::1",
		"fd00:ec2::254", "FD00:EC2:0::254", "100.100.100.200", "::ffff:100.100.100.200",
	} {
		if publicIP(net.ParseIP(s)) {
			t.Errorf("publicIP(%s) = true, want the relay to refuse it", s)
		}
	}
	for _, s := range []string{"93.184.215.14", "151.101.0.223", "2606:4700::6810:84e5", "10.1.2.3", "fd00:ec2::253", "fd12:3456::1", "100.100.100.201"} {
		if !publicIP(net.ParseIP(s)) {
			t.Errorf("publicIP(%s) = false, want a registry there reachable", s)
		}
	}
}
