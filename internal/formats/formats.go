// Package formats checks the string formats whose RFCs keel holds to
// itself, rather than to a validator's looser reading: each one by the
// library made for it or by its RFC's own grammar, written out. The
// generated readers (runtime/wire), the hand-bound path and keelgen's
// schema compiler (internal/toolrules) all take them from here, so every
// path refuses the same values. A format not listed here is the JSON
// Schema validator's (santhosh-tekuri/jsonschema).
package formats

// Format is one format keel checks itself.
type Format struct {
	Name string
	// Follows names the RFC and the library or grammar that decides.
	Follows string
	Valid   func(string) bool
}

// All are the formats keel checks itself, by name.
var All = []Format{
	{"hostname", "RFC 1123 §2.1 labels; an A-label (RFC 5890) decoded by golang.org/x/net/idna and held to RFC 5891 §5.4 and RFC 5892's exceptions and CONTEXTO rules", Hostname},
	{"ipv4", "RFC 2673 §3.2 dotted-quad, parsed by net/netip", IPv4},
	{"ipv6", "RFC 4291 §2.2, parsed by net/netip, without a zone", IPv6},
	{"uri", "RFC 3986 §3 URI, its ABNF", URI},
	{"uri-reference", "RFC 3986 §4.1 URI-reference, its ABNF", URIReference},
	{"iri", "RFC 3987 §2.2 IRI, its ABNF", IRI},
	{"iri-reference", "RFC 3987 §2.2 IRI-reference, its ABNF", IRIReference},
	{"uri-template", "RFC 6570 §2, parsed by github.com/yosida95/uritemplate", URITemplate},
	{"duration", "RFC 3339 Appendix A duration, its ABNF", Duration},
	{"email", "RFC 5321 §4.1.2 Mailbox (with §4.1.3 address literals) and §4.5.3.1's lengths", Email},
}

// Lookup returns the check of format name, or nil when keel leaves it to
// the validator.
func Lookup(name string) func(string) bool {
	for _, f := range All {
		if f.Name == name {
			return f.Valid
		}
	}
	return nil
}
