package formats

import (
	"strings"
)

// Email: RFC 5321 §4.1.2's Mailbox, Local-part "@" ( Domain /
// address-literal ): a dot-string of atext atoms or a quoted string; a
// domain of letter-digit-hyphen labels (each at most 63 octets, RFC 1035
// §2.3.4) or an address literal of §4.1.3 (IPv4, or "IPv6:" and an IPv6
// address; no other tag is registered). §4.5.3.1 bounds the local part
// to 64 octets and the domain to 255.
func Email(s string) bool {
	local, domain, ok := splitMailbox(s)
	if !ok || len(local) == 0 || len(local) > 64 || len(domain) == 0 || len(domain) > 255 {
		return false
	}
	if !dotString(local) && !quotedString(local) {
		return false
	}
	if strings.HasPrefix(domain, "[") && strings.HasSuffix(domain, "]") {
		return addressLiteral(domain[1 : len(domain)-1])
	}
	for label := range strings.SplitSeq(domain, ".") {
		if !subDomain(label) {
			return false
		}
	}
	return true
}

// splitMailbox cuts s at the "@" after its local part, which may itself
// hold an "@" when quoted.
func splitMailbox(s string) (local, domain string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				if i+1 < len(s) && s[i+1] == '@' {
					return s[:i+1], s[i+2:], true
				}
				return "", "", false
			}
		}
		return "", "", false
	}
	i := strings.LastIndexByte(s, '@')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// dotString: Atom *("." Atom), an atom 1*atext (RFC 5322 §3.2.3).
func dotString(s string) bool {
	for atom := range strings.SplitSeq(s, ".") {
		if atom == "" {
			return false
		}
		for i := 0; i < len(atom); i++ {
			if c := atom[i]; !isAlpha(c) && !isDigit(c) && strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) < 0 {
				return false
			}
		}
	}
	return true
}

// quotedString: DQUOTE *( qtextSMTP / quoted-pairSMTP ) DQUOTE.
func quotedString(s string) bool {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
			if i >= len(s)-1 || s[i] < 32 || s[i] > 126 {
				return false
			}
		case c == 32 || c == 33 || c >= 35 && c <= 91 || c >= 93 && c <= 126:
		default:
			return false
		}
	}
	return true
}

// subDomain: Let-dig [Ldh-str], at most 63 octets.
func subDomain(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlpha(c) && !isDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

// addressLiteral is what sits between "[" and "]": IPv4-address-literal
// (four Snum) or "IPv6:" IPv6-addr.
func addressLiteral(s string) bool {
	if len(s) > 5 && strings.EqualFold(s[:5], "IPv6:") {
		return IPv6(s[5:]) && !strings.Contains(s[5:], "%")
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if len(p) == 0 || len(p) > 3 {
			return false
		}
		n := 0
		for i := 0; i < len(p); i++ {
			if !isDigit(p[i]) {
				return false
			}
			n = n*10 + int(p[i]-'0')
		}
		if n > 255 {
			return false
		}
	}
	return true
}
