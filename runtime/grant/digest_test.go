package grant

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/lockfile"
)

// general is the digest by the general path alone: canonicalize, then hash.
func general(doc []byte) (string, error) {
	return lockfile.CanonicalDigest(doc, jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false))
}

var digestCases = []struct {
	doc       string
	canonical bool // hashed as it is
}{
	{`{"incident_id":"INC-001"}`, true},
	{`{}`, true},
	{`[]`, true},
	{`{"a":1,"b":[true,false,null,-0.5e+3,"x"],"c":{"d":{}}}`, true},
	{`{"a":9007199254740993.0,"b":1E5,"c":-0}`, true},
	{`{"b":1,"a":2}`, false}, // out of order
	{`{"a":1,"a":2}`, false}, // a member twice: the general path refuses it
	{`{"a": 1}`, true},       // whitespace, left out
	{" {\n\t\"a\" : [ 1 , {} ] ,\"b\":\"x y\"}\r\n", true},
	{`{"a": "x" , "a": 1}`, false}, // a member twice
	{`{"incident_id": "INC-001", "summary": "Raise the auth-api database pool size"}`, true},
	{`{"a":"\/"}`, false},               // an escape
	{`{"a":"é"}`, false},                // not ASCII
	{`{"a":"` + "\x7f" + `"}`, false},   // DEL: RFC 8785 writes it as is, but the subset leaves it to the general path
	{`{"a":"x","a\u0000":1}`, false},    // an escape in a name
	{`{"a":01}`, false},                 // not JSON
	{`{"a":1.}`, false},                 // not JSON
	{`{"a":1e}`, false},                 // not JSON
	{`{"a":-}`, false},                  // not JSON
	{`{"a":tru}`, false},                // not JSON
	{`{"a":1,}`, false},                 // not JSON
	{`[1,]`, false},                     // not JSON
	{`{"a":1}{"b":2}`, false},           // two values
	{`{"a"}`, false},                    // not JSON
	{`{"A":1,"B":2,"_":3,"a":4}`, true}, // byte order
	{``, false},
	{`   `, false},
	{strings.Repeat("[", 40) + strings.Repeat("]", 40), false},     // deeper than the subset
	{`{"long":"` + strings.Repeat("x ", 400) + `", "n": 1}`, true}, // compacted past the stack buffer
}

func TestArgumentsDigestOfTheCanonicalSubset(t *testing.T) {
	for _, c := range digestCases {
		if s := (scanner{doc: []byte(c.doc)}); s.canonical() != c.canonical {
			t.Errorf("canonical(%q) = %v, want %v", c.doc, !c.canonical, c.canonical)
		}
		want, wantErr := general([]byte(c.doc))
		got, err := ArgumentsDigest([]byte(c.doc))
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("ArgumentsDigest(%q) = %q, %v; the general path gives %q, %v", c.doc, got, err, want, wantErr)
		}
	}
}

// FuzzArgumentsDigest: whatever the bytes, the digest is the general path's.
func FuzzArgumentsDigest(f *testing.F) {
	for _, c := range digestCases {
		f.Add([]byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		want, wantErr := general(doc)
		got, err := ArgumentsDigest(doc)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Fatalf("ArgumentsDigest(%q) = %q, %v; the general path gives %q, %v", doc, got, err, want, wantErr)
		}
	})
}

func BenchmarkArgumentsDigest(b *testing.B) {
	doc := []byte(`{"incident_id": "INC-001"}`)
	b.Run("subset", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ArgumentsDigest(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := general(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
