package schemajson_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/keelgen/keel/internal/schemajson"
)

func TestKeyOrder(t *testing.T) {
	order, err := schemajson.KeyOrder([]byte(`{"type":"object","properties":{"z":{"type":"string"},"a/b":{"enum":[{"y":1,"x":2}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for ptr, want := range map[string][]string{
		"":                        {"type", "properties"},
		"/properties":             {"z", "a/b"},
		"/properties/a~1b/enum/0": {"y", "x"},
	} {
		if !slices.Equal(order[ptr], want) {
			t.Errorf("%q: %q, want %q", ptr, order[ptr], want)
		}
	}
	if _, err := schemajson.KeyOrder([]byte(`{"a":`)); err == nil {
		t.Error("a truncated document was read")
	}
}

// A transformed copy keeps the original's member order; members it added
// follow, sorted.
func TestMarshalInOrder(t *testing.T) {
	orig := []byte(`{"properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"type":"object"}`)
	doc, err := schemajson.Doc(orig)
	if err != nil {
		t.Fatal(err)
	}
	doc["required"] = []any{"zeta"}
	doc["additionalProperties"] = false
	props := doc["properties"].(map[string]any)
	props["alpha"].(map[string]any)["description"] = "added"
	out, err := schemajson.MarshalInOrder(doc, orig)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"zeta":{"type":"string"},"alpha":{"type":"integer","description":"added"}},"type":"object","additionalProperties":false,"required":["zeta"]}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestStringsAndProperties(t *testing.T) {
	for _, c := range []struct {
		v    any
		want []string
	}{
		{"string", []string{"string"}},
		{[]any{"string", "null", 3}, []string{"null", "string"}},
		{nil, nil},
		{map[string]any{}, nil},
	} {
		if got := slices.Sorted(maps.Keys(schemajson.Strings(c.v))); !slices.Equal(got, c.want) {
			t.Errorf("%v: %q, want %q", c.v, got, c.want)
		}
	}
	var doc map[string]any
	json.Unmarshal([]byte(`{"properties":{"a":{},"b":{}},"required":["a",7]}`), &doc)
	props, req := schemajson.Properties(doc)
	if len(props) != 2 || !req["a"] || len(req) != 1 {
		t.Errorf("properties %v, required %v", props, req)
	}
}
