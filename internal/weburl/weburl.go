// Package weburl holds the one rule keel applies to every URL it tells a
// client to trust (a resource, an authorization server, an issuer, a key
// set): https, or http on loopback only, for tests.
package weburl

import (
	"net"
	"net/url"
)

// Secure reports whether u is https, or http to a loopback host.
func Secure(u *url.URL) bool {
	return u.Scheme == "https" || u.Scheme == "http" && Loopback(u.Hostname())
}

// Loopback reports whether host is localhost or a loopback address.
func Loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}
