package formats

import (
	"net/netip"
	"strings"
	"unicode/utf8"
)

// URI: RFC 3986 §3, scheme ":" hier-part [ "?" query ] [ "#" fragment ].
func URI(s string) bool { return absolute(s, false) }

// URIReference: RFC 3986 §4.1, a URI or a relative reference.
func URIReference(s string) bool { return reference(s, false) }

// IRI: RFC 3987 §2.2, a URI whose unreserved characters may be any of
// ucschar (and whose query may hold iprivate).
func IRI(s string) bool { return absolute(s, true) }

// IRIReference: RFC 3987 §2.2, an IRI or a relative reference.
func IRIReference(s string) bool { return reference(s, true) }

func absolute(s string, iri bool) bool {
	scheme, rest, ok := strings.Cut(s, ":")
	return ok && isScheme(scheme) && relativePart(rest, iri, false)
}

func reference(s string, iri bool) bool {
	if scheme, _, ok := strings.Cut(s, ":"); ok && isScheme(scheme) {
		return absolute(s, iri)
	}
	return relativePart(s, iri, true)
}

// isScheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func isScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// relativePart reads what follows a scheme's ":" (hier-part), or a whole
// relative-ref when noScheme: [ "//" authority ] path [ "?" query ]
// [ "#" fragment ]. A relative path's first segment has no ":"
// (path-noscheme), or it would read as a scheme.
func relativePart(s string, iri, noScheme bool) bool {
	s, fragment, hasFragment := strings.Cut(s, "#")
	if hasFragment && !chars(fragment, iri, "/?", false) {
		return false
	}
	s, query, hasQuery := strings.Cut(s, "?")
	if hasQuery && !chars(query, iri, "/?", true) {
		return false
	}
	path := s
	if rest, ok := strings.CutPrefix(s, "//"); ok {
		authority := rest
		path = ""
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			authority, path = rest[:i], rest[i:]
		}
		if !isAuthority(authority, iri) {
			return false
		}
	} else if noScheme && !strings.HasPrefix(path, "/") {
		first, _, _ := strings.Cut(path, "/")
		if strings.Contains(first, ":") {
			return false
		}
	}
	return chars(path, iri, "/", false)
}

// isAuthority: [ userinfo "@" ] host [ ":" port ].
func isAuthority(s string, iri bool) bool {
	if userinfo, rest, ok := strings.Cut(s, "@"); ok {
		if !chars(userinfo, iri, ":", false) || strings.Contains(userinfo, "@") {
			return false
		}
		s = rest
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 || !ipLiteral(s[1:end]) {
			return false
		}
		host, port = "", s[end+1:]
		if port != "" {
			var ok bool
			if port, ok = strings.CutPrefix(port, ":"); !ok {
				return false
			}
		}
	} else if i := strings.IndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
	}
	for i := 0; i < len(port); i++ {
		if !isDigit(port[i]) {
			return false
		}
	}
	return chars(host, iri, "", false) // reg-name (an IPv4address is one too)
}

// ipLiteral is what sits between "[" and "]": IPv6address, or IPvFuture
// ("v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )).
func ipLiteral(s string) bool {
	if len(s) > 0 && (s[0] == 'v' || s[0] == 'V') {
		hexDigits, rest, ok := strings.Cut(s[1:], ".")
		if !ok || hexDigits == "" || rest == "" {
			return false
		}
		for i := 0; i < len(hexDigits); i++ {
			if !isHex(hexDigits[i]) {
				return false
			}
		}
		for i := 0; i < len(rest); i++ {
			if c := rest[i]; !unreserved(c) && !subDelim(c) && c != ':' {
				return false
			}
		}
		return true
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}

// chars reports whether s is all pchar (unreserved, pct-encoded,
// sub-delims, ":" and "@", with an IRI's ucschar) or one of extra; a
// query also takes iprivate. In a host or userinfo ("" or ":" extra) "@"
// is not taken, and a host takes no ":" either.
func chars(s string, iri bool, extra string, query bool) bool {
	hostOrUser := extra == "" || extra == ":"
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 3
			continue
		case unreserved(c), subDelim(c), strings.IndexByte(extra, c) >= 0:
		case c == ':' || c == '@':
			if hostOrUser && (c == '@' || extra == "") {
				return false
			}
		case c >= utf8.RuneSelf && iri:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || !(ucschar(r) || query && iprivate(r)) {
				return false
			}
			i += size
			continue
		default:
			return false
		}
		i++
	}
	return true
}

// unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
func unreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

// subDelim: "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "=".
func subDelim(c byte) bool { return strings.IndexByte("!$&'()*+,;=", c) >= 0 }

// ucschar: RFC 3987 §2.2, the characters an IRI takes beyond ASCII.
func ucschar(r rune) bool {
	switch {
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFEF:
		return true
	case r >= 0x10000 && r <= 0xDFFFD:
		return r&0xFFFF <= 0xFFFD
	case r >= 0xE1000 && r <= 0xEFFFD:
		return r&0xFFFF <= 0xFFFD
	}
	return false
}

// iprivate: RFC 3987 §2.2, private-use characters, in a query only.
func iprivate(r rune) bool {
	return r >= 0xE000 && r <= 0xF8FF || r >= 0xF0000 && r <= 0xFFFFD || r >= 0x100000 && r <= 0x10FFFD
}
