package schemamodel_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemamodel"
)

func mustParse(t *testing.T, doc string) *schemamodel.Schema {
	t.Helper()
	s, err := schemamodel.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return s
}

func encode(t *testing.T, s *schemamodel.Schema) string {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A schema reads and writes back as its compact text: member order,
// numbers as written, keywords keel reads nowhere and values of the wrong
// JSON type all kept where they were.
func TestRoundTripKeepsEveryByte(t *testing.T) {
	for _, doc := range []string{
		`{"properties":{"zeta":{"type":"string"},"alpha":{"type":["integer","null"]}},"type":"object","required":["zeta"],"additionalProperties":false}`,
		`{"type":"integer","exclusiveMaximum":9007199254740993,"minimum":-1e400,"multipleOf":0.10}`,
		`{"minimum":"1","items":[{"type":"string"}],"enum":"x","format":"","x-vendor":{"b":1,"a":2},"description":"d"}`,
		`{"anyOf":[true,false,{"const":null}],"not":{},"default":{"z":1,"a":[1.50]},"$defs":{"a":{"type":"string"}}}`,
		`{"enum":[1,"a",null,true,{"k":[2]}],"type":[],"uniqueItems":false,"required":[]}`,
		`true`, `false`, `{}`,
	} {
		if got := encode(t, mustParse(t, doc)); got != doc {
			t.Errorf("read %s\nwrote %s", doc, got)
		}
	}
}

// Every schema keelgen has committed in this repository reads back to its
// own bytes.
func TestCommittedSchemasRoundTrip(t *testing.T) {
	var files []string
	for _, glob := range []string{"../../generated/schemas/*.json", "../testing/conformance/generated/schemas/*.json", "../../cmd/keelgen/internal/gen/testdata/golden/*/out/schemas/*.json"} {
		found, _ := filepath.Glob(glob)
		files = append(files, found...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d schema files; the globs no longer match the tree", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want := jsontext.Value(bytes.Clone(b))
		if err := want.Compact(); err != nil {
			t.Fatal(err)
		}
		if got := encode(t, mustParse(t, string(b))); got != string(want) {
			t.Errorf("%s:\nwrote %s\nwant  %s", f, got, want)
		}
	}
}

// A known keyword whose value has the wrong JSON type is no field: it stays
// in Other, where a reader that refuses what it cannot check sees it.
func TestWrongTypesStayInOther(t *testing.T) {
	s := mustParse(t, `{"minimum":"1","items":[{}],"required":[1],"type":7,"pattern":"","maxLength":2}`)
	if s.Minimum != "" || s.Items != nil || s.Required != nil || s.Type != nil || s.Pattern != "" {
		t.Errorf("a wrong-typed value was read into a field: %+v", s)
	}
	if s.MaxLength != "2" {
		t.Errorf("maxLength %q", s.MaxLength)
	}
	for _, kw := range []string{"minimum", "items", "required", "type", "pattern"} {
		if _, ok := s.OtherValue(kw); !ok || !s.Has(kw) || !schemamodel.IsTyped(kw) {
			t.Errorf("%s is not kept in Other", kw)
		}
	}
}

// What is not one JSON object or boolean is refused, saying why.
func TestParseRefuses(t *testing.T) {
	for doc, why := range map[string]string{`{"a":1,"a":2}`: `duplicate object member name "a"`, `[]`: "not a JSON object or boolean",
		`"x"`: "not a JSON object or boolean", `{"a":`: "unexpected EOF", "{\"a\":\"\xff\"}": "invalid UTF-8", ``: "EOF",
		`{} {}`: "text follows the value"} {
		if _, err := schemamodel.Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want an error saying %q", doc, err, why)
		}
	}
}

// Keywords written keep their place; keywords added follow, sorted; a
// deleted one is gone, and set again takes its old place.
func TestKeywordOrder(t *testing.T) {
	s := mustParse(t, `{"type":"string","minLength":1,"description":"d"}`)
	s.Delete("minLength")
	s.Required = []string{}
	s.AdditionalProperties = schemamodel.False()
	if got := strings.Join(s.Keywords(), ","); got != "type,description,additionalProperties,required" {
		t.Errorf("keywords %s", got)
	}
	s.MinLength = "3"
	if got := encode(t, s); got != `{"type":"string","minLength":3,"description":"d","additionalProperties":false,"required":[]}` {
		t.Errorf("wrote %s", got)
	}
	if string(s.Keyword("minLength")) != "3" || s.Keyword("maxLength") != nil {
		t.Errorf("Keyword: %s, %s", s.Keyword("minLength"), s.Keyword("maxLength"))
	}
	s.SetKeyword("maxLength", jsontext.Value(`"x"`)) // not a number: kept raw
	if _, ok := s.OtherValue("maxLength"); !ok || s.MaxLength != "" {
		t.Errorf("SetKeyword read a string into a number")
	}
}

// Blank keeps the source's order for a form built anew.
func TestBlankKeepsOrder(t *testing.T) {
	s := mustParse(t, `{"type":"string","description":"d","format":"uuid"}`)
	out := s.Blank()
	out.Format, out.Description, out.Type = "uuid", "d", schemamodel.Types{"STRING"}
	out.SetOther("nullable", jsontext.Value("true"))
	if got := encode(t, out); got != `{"type":"STRING","description":"d","format":"uuid","nullable":true}` {
		t.Errorf("wrote %s", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	s := mustParse(t, `{"properties":{"a":{"type":"string","enum":["x"]}},"required":["a"],"anyOf":[{"type":"null"}]}`)
	c := s.Clone()
	c.Property("a").Type = append(c.Property("a").Type, "null")
	c.Property("a").Enum = append(c.Property("a").Enum, nil)
	c.Required[0] = "b"
	c.AnyOf[0].Type[0] = "string"
	c.Properties[0].Name = "z"
	if got := encode(t, s); got != `{"properties":{"a":{"type":"string","enum":["x"]}},"required":["a"],"anyOf":[{"type":"null"}]}` {
		t.Errorf("the original changed: %s", got)
	}
}

// Canonical is equal for two schemas that check the same: member order and
// annotations aside; numbers stay as written.
func TestCanonical(t *testing.T) {
	a := mustParse(t, `{"type":"object","description":"A.","properties":{"x":{"maximum":10,"title":"X"},"y":{}}}`)
	b := mustParse(t, `{"properties":{"y":{},"x":{"maximum":10}},"type":"object"}`)
	if !bytes.Equal(a.Canonical(true), b.Canonical(true)) {
		t.Errorf("%s\n%s", a.Canonical(true), b.Canonical(true))
	}
	if bytes.Equal(a.Canonical(false), b.Canonical(false)) {
		t.Error("annotations were dropped from the full canonical form")
	}
	c := mustParse(t, `{"properties":{"y":{},"x":{"maximum":10.0}},"type":"object"}`)
	if bytes.Equal(a.Canonical(true), c.Canonical(true)) {
		t.Error("10 and 10.0 read as one bound: numbers are kept as written")
	}
}

func TestAllowsNull(t *testing.T) {
	for doc, want := range map[string]bool{
		`{}`: true, `true`: true, `false`: false, `{"type":"string"}`: false, `{"type":["string","null"]}`: true,
		`{"enum":["a",null]}`: true, `{"enum":["a"]}`: false, `{"const":null}`: true, `{"const":1}`: false,
		`{"minLength":1}`: true,
	} {
		if got := mustParse(t, doc).AllowsNull(); got != want {
			t.Errorf("%s: %v, want %v", doc, got, want)
		}
	}
}

func TestNumbers(t *testing.T) {
	s := mustParse(t, `{"exclusiveMaximum":9007199254740993,"multipleOf":2.50,"minimum":1e2}`)
	if r := s.ExclusiveMaximum.Rat(); r == nil || r.Num().String() != "9007199254740993" {
		t.Errorf("exclusiveMaximum %v", r)
	}
	if s.Number("multipleOf") != "2.50" || s.Number("minimum") != "1e2" || !s.Minimum.IsInt() || s.MultipleOf.IsInt() {
		t.Errorf("numbers %q %q", s.Number("multipleOf"), s.Number("minimum"))
	}
	if s.Number("pattern") != "" {
		t.Error("a string keyword read as a number")
	}
	v, err := schemamodel.DecodeValue(jsontext.Value(`[1.50,"a"]`))
	if err != nil || v.([]any)[0] != json.Number("1.50") {
		t.Errorf("DecodeValue: %v %v", v, err)
	}
}

// Walk reaches every subschema, under applicators with no field too, each
// with its pointer.
func TestWalkReachesEverySubschema(t *testing.T) {
	s := mustParse(t, `{"properties":{"a/b":{"items":{"const":1}}},"anyOf":[{"not":{}}],"additionalProperties":{},
		"$defs":{"d":{"prefixItems":[{}]}},"if":{"then":true},"default":{"properties":{"hidden":{}}}}`)
	var got []string
	s.Walk(func(_ *schemamodel.Schema, ptr jsontext.Pointer) { got = append(got, string(ptr)) })
	want := []string{"", "/properties/a~1b", "/properties/a~1b/items", "/anyOf/0", "/anyOf/0/not", "/additionalProperties",
		"/$defs/d", "/$defs/d/prefixItems/0", "/if", "/if/then"}
	if !slices.Equal(got, want) {
		t.Errorf("walked %q\nwant   %q", got, want)
	}
}

// A walk follows a raw applicator as it is now, not as it was read, and
// reaches the bottom of raw applicators nested as deep as JSON is read.
func TestWalkFollowsChangesAndDeepNesting(t *testing.T) {
	s := mustParse(t, `{"$defs":{"a":{}}}`)
	s.SetOther("$defs", jsontext.Value(`{"z":{"if":{}}}`))
	var got []string
	s.Walk(func(_ *schemamodel.Schema, ptr jsontext.Pointer) { got = append(got, string(ptr)) })
	if want := []string{"", "/$defs/z", "/$defs/z/if"}; !slices.Equal(got, want) {
		t.Errorf("walked %q, want %q", got, want)
	}
	const depth = 3000 // jsontext reads at most 10000 levels
	deep := strings.Repeat(`{"$defs":{"d":`, depth) + `{}` + strings.Repeat(`}}`, depth)
	s = mustParse(t, deep)
	n := 0
	s.Walk(func(*schemamodel.Schema, jsontext.Pointer) { n++ })
	if n != depth+1 {
		t.Errorf("walked %d schemas, want %d", n, depth+1)
	}
}

func TestTypes(t *testing.T) {
	ts := schemamodel.Types{"string", "null"}
	if !ts.Has("null") || ts.Is("string") || !ts.Admits("string") || ts.Admits("integer") {
		t.Error("Has, Is or Admits")
	}
	if !schemamodel.Types(nil).Admits("integer") {
		t.Error("an absent type admits every type")
	}
	if w := ts.Without("null"); !w.Is("string") || (schemamodel.Types{"null"}).Without("null") != nil {
		t.Errorf("Without: %q", w)
	}
}

// Any input reads without a panic or is refused; what reads writes back as
// valid JSON that reads again to the same text, its clone and canonical
// forms encode, and a walk visits it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"type":["string"],"description":"\u0041<&>"}`, `{"properties":{"a":{"items":[true,{"not":false}]}}}`,
		`{"$defs":{"x":{"if":{"const":[1,{"b":2.50}]}}},"enum":[null],"minimum":-0,"type":[]}`, `true`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		s, err := schemamodel.Parse(doc)
		if err != nil {
			return
		}
		out, err := s.MarshalJSON()
		if err != nil || !jsontext.Value(out).IsValid() {
			t.Fatalf("%s wrote %s (%v)", doc, out, err)
		}
		again, err := schemamodel.Parse(out)
		if err != nil {
			t.Fatalf("%s wrote %s, which does not read: %v", doc, out, err)
		}
		if back, _ := again.MarshalJSON(); !bytes.Equal(back, out) {
			t.Fatalf("%s wrote %s, then %s", doc, out, back)
		}
		if c, _ := s.Clone().MarshalJSON(); !bytes.Equal(c, out) {
			t.Fatalf("the clone of %s wrote %s", out, c)
		}
		if !jsontext.Value(s.Canonical(true)).IsValid() {
			t.Fatalf("canonical form of %s is not JSON", out)
		}
		s.Walk(func(*schemamodel.Schema, jsontext.Pointer) {})
	})
}
