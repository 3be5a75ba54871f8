package formats

import "net/netip"

// IPv4: RFC 2673 §3.2's dotted-quad, four decimal numbers 0–255 without
// leading zeros, signs or anything else (net/netip parses it so).
func IPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// IPv6: RFC 4291 §2.2's text forms, an embedded IPv4 address among them;
// a zone (fe80::1%eth0) is not part of the address.
func IPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}
