package wire

import (
	"encoding/base64"
	"net/netip"
	"strconv"
	"strings"
)

// Texts handed to a parser keel does not own (a type's UnmarshalText,
// time.ParseDuration) are bounded first: such a parser may take time
// quadratic in its input (shopspring's decimal does), and a call of up to
// the argument limit must not cost seconds. A member's own maxLength
// replaces the bound, up or down.
const (
	// MaxText is the most bytes of a text value (a type with UnmarshalText:
	// uuid.UUID, netip's types, a //keel:text type) without maxLength.
	MaxText = 1024
	// MaxDuration is the most bytes of a time.Duration's text without
	// maxLength.
	MaxDuration = 64
)

// Bounded refuses s longer than limit bytes, as maxLength.
func Bounded(s string, limit int) error {
	if len(s) > limit {
		return Failf("maxLength", "over keel's bound of "+strconv.Itoa(limit)+" bytes for this text; a maxLength on the member sets another")
	}
	return nil
}

// Base64 reads padded standard base64 as RFC 4648 (and json v2) does: no
// character outside the alphabet, line breaks included, which
// encoding/base64 skips.
func Base64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(s) != base64.StdEncoding.EncodedLen(len(b)) {
		return nil, Failf("contentEncoding", "not strict base64")
	}
	return b, nil
}

// ParseAddr reads an IP address: never the zero Addr (netip reads "" as
// no address at all), and a zone only of the characters interface names
// and indexes use.
func ParseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, Failf("format", "not an IP address")
	}
	if !plainZone(a.Zone()) {
		return netip.Addr{}, errZone()
	}
	return a, nil
}

// ParsePrefix reads an IP network prefix, never the zero Prefix (netip
// refuses a zone in one).
func ParsePrefix(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, Failf("format", "not an IP prefix")
	}
	return p, nil
}

// ParseAddrPort reads an address and port, never the zero AddrPort, with a
// zone as ParseAddr takes it.
func ParseAddrPort(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, Failf("format", "not an IP address and port")
	}
	if !plainZone(ap.Addr().Zone()) {
		return netip.AddrPort{}, errZone()
	}
	return ap, nil
}

// errZone is a new error each time: At writes its pointer into it.
func errZone() error {
	return Failf("format", "an IPv6 zone with a character outside letters, digits, '.', '_' and '-' or over 64 bytes")
}

// plainZone reports whether an IPv6 zone (an interface name such as eth0,
// or an index) is of ASCII letters, digits, '.', '_' and '-', at most 64
// bytes: no control character, space or line break reaches a handler.
func plainZone(z string) bool {
	if len(z) > 64 {
		return false
	}
	return !strings.ContainsFunc(z, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	})
}
