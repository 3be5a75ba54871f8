package formats

import (
	"strings"
	"unicode"

	"golang.org/x/net/idna"
)

// registration decodes and checks an A-label as a registry would
// (IDNA2008's lookup rules are looser): its code points, its joiners
// (CONTEXTJ) and its bidi rule.
var registration = idna.New(idna.ValidateForRegistration(), idna.StrictDomainName(true))

// Hostname: RFC 1123 §2.1 (letters, digits and hyphens, a label of 1–63
// octets that neither starts nor ends with a hyphen; at most 253 octets in
// all, no trailing dot), where a label with "--" in its third and fourth
// positions is an A-label (RFC 5890 §2.3.2.1) that must decode to a valid
// U-label.
func Hostname(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if !hostLabel(label) {
			return false
		}
	}
	return true
}

func hostLabel(l string) bool {
	if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		if c := l[i]; !isAlpha(c) && !isDigit(c) && c != '-' {
			return false
		}
	}
	if len(l) >= 4 && l[2] == '-' && l[3] == '-' {
		// RFC 5891 §4.2.3.1: "--" there is reserved, and only "xn--" is in use.
		return strings.EqualFold(l[:2], "xn") && aLabel(l)
	}
	return true
}

// aLabel reports whether l is an A-label: Punycode that decodes to a U-label
// which encodes back to l, and which RFC 5891 §5.4 and RFC 5892 allow.
func aLabel(l string) bool {
	l = strings.ToLower(l) // RFC 4343: the same name in any case
	u, err := registration.ToUnicode(l)
	if err != nil || u == "" {
		return false
	}
	if back, err := registration.ToASCII(u); err != nil || !strings.EqualFold(back, l) {
		return false
	}
	runes := []rune(u)
	if len(runes) >= 4 && runes[2] == '-' && runes[3] == '-' { // RFC 5891 §4.2.3.1
		return false
	}
	if unicode.Is(unicode.M, runes[0]) { // RFC 5891 §4.2.3.2: no leading combining mark
		return false
	}
	for i, r := range runes {
		if exceptionDisallowed(r) || !contextO(runes, i) {
			return false
		}
	}
	return true
}

// exceptionDisallowed are RFC 5892 §2.6's exceptions that are DISALLOWED.
func exceptionDisallowed(r rune) bool {
	switch {
	case r == 0x0640, r == 0x07FA, r == 0x302E, r == 0x302F, r >= 0x3031 && r <= 0x3035, r == 0x303B:
		return true
	}
	return false
}

// contextO holds the code point at i of a U-label to RFC 5892 Appendix A's
// CONTEXTO rules (A.3–A.9); any other code point passes.
func contextO(label []rune, i int) bool {
	before := func() rune {
		if i == 0 {
			return -1
		}
		return label[i-1]
	}
	after := func() rune {
		if i == len(label)-1 {
			return -1
		}
		return label[i+1]
	}
	switch r := label[i]; {
	case r == 0x00B7: // A.3 MIDDLE DOT: between two l
		return before() == 'l' && after() == 'l'
	case r == 0x0375: // A.4 GREEK LOWER NUMERAL SIGN: before Greek
		return after() != -1 && unicode.Is(unicode.Greek, after())
	case r == 0x05F3, r == 0x05F4: // A.5, A.6 HEBREW GERESH, GERSHAYIM: after Hebrew
		return before() != -1 && unicode.Is(unicode.Hebrew, before())
	case r == 0x30FB: // A.7 KATAKANA MIDDLE DOT: with Hiragana, Katakana or Han
		for _, c := range label {
			if c != 0x30FB && (unicode.Is(unicode.Hiragana, c) || unicode.Is(unicode.Katakana, c) || unicode.Is(unicode.Han, c)) {
				return true
			}
		}
		return false
	case r >= 0x0660 && r <= 0x0669: // A.8 ARABIC-INDIC DIGITS: not with the extended ones
		return !hasRange(label, 0x06F0, 0x06F9)
	case r >= 0x06F0 && r <= 0x06F9: // A.9 EXTENDED ARABIC-INDIC DIGITS: not with the others
		return !hasRange(label, 0x0660, 0x0669)
	}
	return true
}

func hasRange(label []rune, lo, hi rune) bool {
	for _, c := range label {
		if c >= lo && c <= hi {
			return true
		}
	}
	return false
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
