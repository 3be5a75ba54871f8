package load

import (
	"go/types"
	"strings"
	"testing"
)

// tagSyntaxError agrees with reflect.StructTag on what it can read.
func TestTagSyntax(t *testing.T) {
	for tag, want := range map[string]string{
		`json:"a" jsonschema:"pattern=^[0-9]{3\\,}$"`: "",
		`json:"a"  x:"b"`: "",
		``:                "",
		`json:"a" jsonschema:"pattern=^[0-9]{3\,}$"`: "not a valid Go string",
		`json:"a`:   "unterminated",
		`json: "a"`: "key:\"value\" pairs",
		`json`:      "key:\"value\" pairs",
	} {
		got := tagSyntaxError(tag)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", tag, got, want)
		}
	}
}

// A jsonschema tag piece the reflector would drop is named, with why; one it
// reads is not.
func TestSchemaPieces(t *testing.T) {
	str, num, ints := types.Typ[types.String], types.Typ[types.Float64], types.NewSlice(types.Typ[types.Int])
	for _, c := range []struct {
		piece string
		typ   types.Type
		want  string
	}{
		{"minLength=1", str, ""},
		{"required", str, ""},
		{"title=Name", num, ""},
		{"minimum=0.5", num, ""},
		{"minItems=1", ints, ""},
		{"maximum=9", ints, ""}, // handed to the items
		{"}$", str, "not key=value"},
		{"minLenght=1", str, "does not read minLenght"},
		{"minLength=1", num, "does not read minLength"},
		{"maximum=ten", num, "takes a number"},
		{"maxLength=-1", str, "whole number"},
		{"pattern=a=b", types.NewSlice(str), "no = inside"},
	} {
		got := schemaPieceProblem(c.piece, c.typ, nil)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s on %s: %q, want %q", c.piece, c.typ, got, c.want)
		}
	}
}
