package formats_test

import (
	"os"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/formats"
)

// Each case is a value, whether its format takes it, and the rule of the
// RFC that says so.
var cases = map[string][]struct {
	value string
	valid bool
	rule  string
}{
	"hostname": {
		{"www.example.com", true, "RFC 1123 §2.1: letter-digit-hyphen labels"},
		{"3com.com", true, "RFC 1123 §2.1: a label may start with a digit"},
		{"localhost", true, "RFC 1123 §2.1: one label"},
		{"xn--bcher-kva.example", true, "RFC 5890 §2.3.2.1: an A-label (bücher)"},
		{"XN--BCHER-KVA.example", true, "RFC 4343: names compare without case"},
		{"example.", false, "RFC 1123 §2.1: a name, not a fully qualified one with its root's dot"},
		{"-api.example.com", false, "RFC 952, kept by RFC 1123 §2.1: no leading hyphen"},
		{"api-.example.com", false, "RFC 952: no trailing hyphen"},
		{"a_b.example", false, "RFC 1123 §2.1: letters, digits, hyphens only"},
		{"a..b", false, "RFC 1123 §2.1: no empty label"},
		{strings.Repeat("a", 64) + ".com", false, "RFC 1123 §2.1: a label is at most 63 octets"},
		{strings.Repeat("a.", 127) + "a", false, "RFC 1123 §2.1: at most 253 octets of text (255 on the wire)"},
		{"xn--X", false, "RFC 3492: not Punycode"},
		{"ab--cd.example", false, "RFC 5891 §4.2.3.1: -- in positions 3 and 4 is reserved"},
		{"XN--aa---o47jg78q", false, "RFC 5891 §4.2.3.1: the U-label has -- in positions 3 and 4"},
		{"xn--hello-txk", false, "RFC 5891 §4.2.3.2: begins with a combining mark"},
		{"xn--07jt112bpxg", false, "RFC 5892 §2.6: U+302E is DISALLOWED"},
		{"xn--al-0ea", false, "RFC 5892 A.3: MIDDLE DOT not between two l"},
		{"xn--ll-0ea", true, "RFC 5892 A.3: MIDDLE DOT between two l"},
		{"xn--S-jib3p", false, "RFC 5892 A.4: KERAIA not before Greek"},
		{"xn--5db1e", false, "RFC 5892 A.5: GERESH not after Hebrew"},
		{"xn--vek", false, "RFC 5892 A.7: KATAKANA MIDDLE DOT with no Hiragana, Katakana or Han"},
		{"xn--ngb6iyr", false, "RFC 5892 A.8: Arabic-Indic digits with the extended ones"},
		{"xn--11b2er09f", false, "RFC 5892 A.2: ZERO WIDTH JOINER not after a virama"},
	},
	"ipv4": {
		{"192.168.0.1", true, "RFC 2673 §3.2: dotted-quad"},
		{"+1.2.3.4", false, "RFC 2673 §3.2: decimal digits only"},
		{"10.0.0.01", false, "RFC 2673 §3.2: no leading zeros"},
		{"256.0.0.1", false, "RFC 2673 §3.2: each part 0–255"},
		{"1.2.3", false, "RFC 2673 §3.2: four parts"},
	},
	"ipv6": {
		{"::1", true, "RFC 4291 §2.2: compressed form"},
		{"::ffff:192.0.2.1", true, "RFC 4291 §2.2 form 3: an embedded IPv4 address"},
		{"fe80::1%eth0", false, "RFC 4291 §2.2: a zone is not part of the address (RFC 4007)"},
		{"1:2:3:4:5:6:7:8:9", false, "RFC 4291 §2.2: eight pieces at most"},
		{"[::1]", false, "RFC 4291 §2.2: no brackets (those are RFC 3986's)"},
	},
	"uri": {
		{"https://example.org/a/b?q=1#top", true, "RFC 3986 §3"},
		{"urn:isbn:0451450523", true, "RFC 3986 §3: path-rootless"},
		{"mailto:user@example.com", true, "RFC 3986 §3.3: @ is a pchar"},
		{"http://[2001:db8::7]/c=GB", true, "RFC 3986 §3.2.2: an IPv6 literal"},
		{"http://user:pw@example.org:8080/", true, "RFC 3986 §3.2: userinfo and port"},
		{"https://example.org/a%20b", true, "RFC 3986 §2.1: percent-encoded"},
		{"https://example.org/foo bar", false, "RFC 3986 §2: a space is not allowed"},
		{`https://example.org/a"b`, false, "RFC 3986 §2: \" is not allowed"},
		{"https://example.org/<>{}^`|\\", false, "RFC 3986 §2: none of these is allowed"},
		{"https://example.org/foobar®", false, "RFC 3986 §2: no character beyond ASCII"},
		{"https://example.org/a%2", false, "RFC 3986 §2.1: % and two hex digits"},
		{"http:/[::1]", false, "RFC 3986 §3.3: [ is not a pchar"},
		{"//example.org/", false, "RFC 3986 §3: a URI has a scheme"},
		{"1http://example.org", false, "RFC 3986 §3.1: a scheme starts with a letter"},
		{"http://a@b@example.org/", false, "RFC 3986 §3.2.2: a host has no @"},
		{"http://example.org:80a/", false, "RFC 3986 §3.2.3: a port is digits"},
	},
	"uri-reference": {
		{"/a/b", true, "RFC 3986 §4.2: path-absolute"},
		{"a/b:c", true, "RFC 3986 §4.2: : after the first segment"},
		{"?q", true, "RFC 3986 §4.2: a query alone"},
		{"", true, "RFC 3986 §4.2: path-empty"},
		{"a:b", true, "RFC 3986 §4.1: a URI"},
		{"/[::1]", false, "RFC 3986 §3.3: [ outside an authority"},
		{"//a@b@example.com/", false, "RFC 3986 §3.2.2: two @ in an authority"},
		{"1a:b", false, "RFC 3986 §4.2: path-noscheme has no : in its first segment"},
		{"/a\"b", false, "RFC 3986 §2: \" is not allowed"},
	},
	"iri": {
		{"https://例え.テスト/パス?q=値#片", true, "RFC 3987 §2.2: ucschar in every part"},
		{"http://[V1.fe]", true, "RFC 3986 §3.2.2: IPvFuture, its v in either case"},
		{"https://example.org/a b", false, "RFC 3987 §2.2: a space is not allowed"},
		{"https://example.org/\ue000", false, "RFC 3987 §2.2: iprivate only in a query"},
		{"https://example.org/?\ue000", true, "RFC 3987 §2.2: iprivate in a query"},
		{"https://example.org/\ufffe", false, "RFC 3987 §2.2: a noncharacter is no ucschar"},
	},
	"iri-reference": {
		{"/パス", true, "RFC 3987 §2.2: irelative-ref"},
		{"\\\\WINDOWS\\filëshare", false, "RFC 3987 §2.2: \\ is not allowed"},
	},
	"uri-template": {
		{"http://example.com/dictionary/{term:1}/{term}", true, "RFC 6570 §2.4.1: a prefix"},
		{"{#var}", true, "RFC 6570 §2.2: the fragment operator"},
		{"{/var}", true, "RFC 6570 §2.2: the path operator"},
		{"{?var,x*}", true, "RFC 6570 §2.2, §2.4.2: the query operator, an explode"},
		{"{v:1000}", true, "RFC 6570 §2.4.1: max-length is 1*4DIGIT"},
		{"{v:10000}", false, "RFC 6570 §2.4.1: max-length below 10000"},
		{"{}", false, "RFC 6570 §2.2: an expression has a variable"},
		{"{a,}", false, "RFC 6570 §2.3: no empty varspec"},
		{"{a..b}", false, "RFC 6570 §2.3: no empty varname part"},
		{"{var=def}", false, "RFC 6570 §2.3: no default value"},
		{"a b", false, "RFC 6570 §2.1: a space is no literal"},
		{"{var", false, "RFC 6570 §2.2: an expression is closed"},
	},
	"duration": {
		{"P1Y2M3DT4H5M6S", true, "RFC 3339 Appendix A: every unit"},
		{"P4W", true, "RFC 3339 Appendix A: dur-week"},
		{"PT36H", true, "RFC 3339 Appendix A: dur-hour"},
		{"P1D", true, "RFC 3339 Appendix A: dur-day"},
		{"P1Y2D", false, "RFC 3339 Appendix A: a day after a year needs a month"},
		{"PT1H2S", false, "RFC 3339 Appendix A: a second after an hour needs a minute"},
		{"P", false, "RFC 3339 Appendix A: at least one unit"},
		{"PT", false, "RFC 3339 Appendix A: dur-time has a unit"},
		{"P1W2D", false, "RFC 3339 Appendix A: a week stands alone"},
		{"P1.5D", false, "RFC 3339 Appendix A: 1*DIGIT, no fraction"},
		{"P2D1Y", false, "RFC 3339 Appendix A: units in order"},
	},
	"email": {
		{"joe.bloggs@example.com", true, "RFC 5321 §4.1.2: Dot-string"},
		{"te~st@example.com", true, "RFC 5322 §3.2.3: ~ is atext"},
		{`"joe bloggs"@example.com`, true, "RFC 5321 §4.1.2: Quoted-string"},
		{`"joe\"b@x"@example.com`, true, "RFC 5321 §4.1.2: quoted-pairSMTP"},
		{"joe@[127.0.0.1]", true, "RFC 5321 §4.1.3: IPv4-address-literal"},
		{"joe@[IPv6:::1]", true, "RFC 5321 §4.1.3: IPv6-address-literal"},
		{"@example.com", false, "RFC 5321 §4.1.2: a local part"},
		{"joe@", false, "RFC 5321 §4.1.2: a domain"},
		{".joe@example.com", false, "RFC 5321 §4.1.2: no empty atom"},
		{"jo..e@example.com", false, "RFC 5321 §4.1.2: no empty atom"},
		{"joe(x)@example.com", false, "RFC 5321 §4.1.2: ( is no atext (no comments in SMTP)"},
		{"joe@-example.com", false, "RFC 5321 §4.1.2: sub-domain starts with Let-dig"},
		{"joe@[256.0.0.1]", false, "RFC 5321 §4.1.3: Snum is 0–255"},
		{"joe@[foo:bar]", false, "RFC 5321 §4.1.3: no tag but IPv6 is registered"},
		{strings.Repeat("a", 65) + "@example.com", false, "RFC 5321 §4.5.3.1.1: a local part is at most 64 octets"},
	},
}

// Every format keel checks itself has its cases, and each case holds.
func TestFormatsFollowTheirRFCs(t *testing.T) {
	for _, f := range formats.All {
		if len(cases[f.Name]) == 0 {
			t.Errorf("format %s has no cases", f.Name)
		}
		if formats.Lookup(f.Name) == nil || f.Follows == "" {
			t.Errorf("format %s: no check, or no word of what it follows", f.Name)
		}
	}
	for name, list := range cases {
		check := formats.Lookup(name)
		if check == nil {
			t.Fatalf("no format %s", name)
		}
		for _, c := range list {
			if got := check(c.value); got != c.valid {
				t.Errorf("%s %q: %v, want %v (%s)", name, c.value, got, c.valid, c.rule)
			}
		}
	}
	if formats.Lookup("date-time") != nil {
		t.Error("date-time is the validator's, not keel's")
	}
}

// docs/annotation.md's table names every format keel checks itself, with
// what it follows, as All says.
func TestTheDocsNameWhatEachFormatFollows(t *testing.T) {
	b, err := os.ReadFile("../../docs/annotation.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range formats.All {
		if row := "| `" + f.Name + "` | " + f.Follows + " |"; !strings.Contains(string(b), row) {
			t.Errorf("docs/annotation.md has no row %q", row)
		}
	}
}
