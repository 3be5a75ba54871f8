package schema

import (
	"strings"
	"testing"
)

// The design's schema shape: an object at the root, every type inlined.
func TestCheckRoot(t *testing.T) {
	for doc, want := range map[string]string{
		`{"type":"object","properties":{"a":{"type":["string","null"]}}}`: "",
		`{"type":"string"}`:                                   `root type "string"`,
		`{"type":["object","null"]}`:                          `root type ["object","null"]`,
		`{"type":"object","$defs":{}}`:                        "$ref",
		`{"type":"object","properties":{"a":{"$ref":"#/x"}}}`: "$ref",
		`[]`: "not a JSON Schema object",
	} {
		got := checkRoot([]byte(doc), false)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
}

// Schemas are written indented, newline-terminated, with <, > and & as
// written (the reflector escapes them for HTML).
func TestFormat(t *testing.T) {
	got, err := format([]byte(`{"type":"string","pattern":"\u003ca\u0026b\u003e"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"type\": \"string\",\n  \"pattern\": \"<a&b>\"\n}\n"; string(got) != want {
		t.Fatalf("format gave\n%s\nwant\n%s", got, want)
	}
}
