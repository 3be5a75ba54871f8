package forms_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/keelgen/keel/internal/forms"
	"github.com/keelgen/keel/internal/testing/jsontest"
)

// Each keyword the parameters form has no member for becomes what it takes
// (capital types, nullable, a one-value enum, anyOf) or words in the
// description, and the change is listed by path.
func TestGeminiParameters(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		changed        []string
	}{
		{"types in capitals, author order kept",
			`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer","minimum":1}},"required":["zeta"],"additionalProperties":false}`,
			`{"type":"OBJECT","properties":{"zeta":{"type":"STRING"},"alpha":{"type":"INTEGER","minimum":1}},"propertyOrdering":["zeta","alpha"],"required":["zeta"]}`,
			nil},
		{"a null type is nullable",
			`{"type":["string","null"],"maxLength":5}`,
			`{"type":"STRING","nullable":true,"maxLength":5}`, nil},
		{"a null alternative is nullable",
			`{"anyOf":[{"type":"string"},{"type":"null"}]}`,
			`{"nullable":true,"anyOf":[{"type":"STRING"}]}`, nil},
		{"a string const is a one-value enum",
			`{"type":"string","const":"v1"}`,
			`{"type":"STRING","enum":["v1"]}`, []string{"the arguments: const as a one-value enum"}},
		{"a number enum in words",
			`{"type":"integer","enum":[1,2,3],"description":"Level."}`,
			`{"type":"INTEGER","description":"Level. (one of 1, 2, 3)"}`, []string{"the arguments: enum said in the description"}},
		{"exclusive bounds and multipleOf in words",
			`{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1,"multipleOf":0.5}`,
			`{"type":"NUMBER","description":"(less than 1; more than 0; a multiple of 0.5)"}`,
			[]string{"the arguments: exclusiveMaximum said in the description", "the arguments: exclusiveMinimum said in the description", "the arguments: multipleOf said in the description"}},
		{"a format it knows is kept, another said",
			`{"type":"object","properties":{"at":{"type":"string","format":"date-time"},"id":{"type":"string","format":"uuid"}}}`,
			`{"type":"OBJECT","properties":{"at":{"type":"STRING","format":"date-time"},"id":{"type":"STRING","description":"(format: uuid)"}},"propertyOrdering":["at","id"]}`,
			[]string{"id: format said in the description"}},
		{"oneOf read as anyOf",
			`{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
			`{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}`, []string{"the arguments: oneOf read as anyOf"}},
		{"a map in words",
			`{"type":"object","additionalProperties":{"type":"integer"}}`,
			`{"type":"OBJECT","description":"(members of any name, each value of type integer)"}`,
			[]string{"the arguments: additionalProperties said in the description"}},
		{"items and unique items",
			`{"type":"array","items":{"type":"string","pattern":"^a"},"uniqueItems":true,"maxItems":3}`,
			`{"type":"ARRAY","items":{"type":"STRING","pattern":"^a"},"maxItems":3,"description":"(no item twice)"}`,
			[]string{"the arguments: uniqueItems said in the description"}},
		{"items as a list and an enum that is no list are dropped and listed",
			`{"type":"array","items":[{"type":"string"}],"enum":"x"}`,
			`{"type":"ARRAY"}`, []string{"the arguments: enum dropped (not a list)", "the arguments: items dropped (no form for a list of item schemas)"}},
		{"a keyword with no form is dropped and listed",
			`{"type":"array","items":{"type":"string"},"contains":{"const":"x"},"$comment":"c"}`,
			`{"type":"ARRAY","items":{"type":"STRING"}}`, []string{"the arguments: contains dropped (no form for it)"}},
		{"a string's reserved values are said in words; another not is dropped and listed",
			`{"type":"object","properties":{"a":{"type":"string","not":{"const":"x"}},"b":{"type":"string","not":{"minLength":2}}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING","description":"(never \"x\")"},"b":{"type":"STRING"}},"propertyOrdering":["a","b"]}`,
			[]string{"a: not said in the description", "b: not dropped (no form for it)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, changed, err := forms.GeminiParameters(json.RawMessage(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if !jsontest.Equal(t, out, json.RawMessage(c.want)) {
				t.Errorf("got  %s\nwant %s", out, c.want)
			}
			if !slices.Equal(changed, c.changed) {
				t.Errorf("changed %q, want %q", changed, c.changed)
			}
			// Nothing is written that genai.Schema has no member for: the
			// SDK reads it and writes it back the same.
			var s genai.Schema
			if err := json.Unmarshal(out, &s); err != nil {
				t.Fatal(err)
			}
			back, err := json.Marshal(&s)
			if err != nil {
				t.Fatal(err)
			}
			if !jsontest.Equal(t, json.RawMessage(back), out) {
				t.Errorf("genai.Schema wrote %s back for %s", back, out)
			}
		})
	}
}

// The property order is written in the output too, not only as
// propertyOrdering.
func TestGeminiParametersKeepOrderInBytes(t *testing.T) {
	out, _, err := forms.GeminiParameters(json.RawMessage(`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(string(out), `"b":{`), strings.Index(string(out), `"a":{`); i < 0 || j < i {
		t.Errorf("order lost: %s", out)
	}
}

func TestGeminiNameProblem(t *testing.T) {
	for name, bad := range map[string]bool{"lookup_incident": false, "_x": false, "a.b:c-d": false, "2fa_reset": true, "-x": true} {
		if got := forms.GeminiNameProblem(name) != ""; got != bad {
			t.Errorf("%s: problem %v, want %v", name, got, bad)
		}
	}
}

// Nova's plain form leaves the root only type, properties and required;
// the rest is said in the description of the member that had it.
func TestNovaPlain(t *testing.T) {
	out, lost, err := forms.NovaPlain(json.RawMessage(`{"type":"object","description":"Args.","additionalProperties":false,"properties":{"id":{"type":"string","pattern":"^INC-","description":"The id."}},"required":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"object","properties":{"id":{"type":"string","description":"The id. (pattern \"^INC-\")"}},"required":["id"]}`; !jsontest.Equal(t, out, json.RawMessage(want)) {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if !slices.Equal(lost, []string{"the arguments: description", "id: pattern"}) {
		t.Errorf("lost %q", lost)
	}
}

// Any schema document converts without a panic, into JSON genai.Schema
// reads, or is refused with an error.
func FuzzGeminiParameters(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":["string","null"],"enum":["x",null]}}}`,
		`{"anyOf":[{"type":"null"},{"oneOf":[{"const":1}]}],"items":[true],"additionalProperties":{"type":"integer"}}`,
		`{"properties":{"a/b~c":{"properties":{"x":{}}}},"required":"a"}`, `[]`, `{"type":7}`, `{"minimum":"1","maxLength":1.5,"title":3,"required":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, _, err := forms.GeminiParameters(doc)
		if err != nil {
			return
		}
		var s genai.Schema
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("%s became %s, which genai.Schema does not read: %v", doc, out, err)
		}
	})
}
