package load

import (
	"encoding/json"
	"fmt"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

// The schema reflector reads struct tags with reflect.StructTag, which gives
// up silently on a tag it cannot parse, and reads a jsonschema piece only
// when it knows the key for the field's JSON type. Either way a constraint
// would vanish from the schema, and so from the generated checks, without a
// word; these functions say it at the field instead.

// tagSyntaxError reports why reflect.StructTag cannot read tag, or "".
// It follows reflect's own parser: key:"value" pairs separated by spaces,
// each value a Go string literal.
func tagSyntaxError(tag string) string {
	for tag != "" {
		i := 0
		for i < len(tag) && tag[i] == ' ' {
			i++
		}
		tag = tag[i:]
		if tag == "" {
			break
		}
		i = 0
		for i < len(tag) && tag[i] > ' ' && tag[i] != ':' && tag[i] != '"' && tag[i] != 0x7f {
			i++
		}
		if i == 0 || i+1 >= len(tag) || tag[i] != ':' || tag[i+1] != '"' {
			return "is not a list of key:\"value\" pairs"
		}
		key := tag[:i]
		tag = tag[i+1:]
		i = 1
		for i < len(tag) && tag[i] != '"' {
			if tag[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(tag) {
			return fmt.Sprintf("has an unterminated value for key %s", key)
		}
		if _, err := strconv.Unquote(tag[:i+1]); err != nil {
			return fmt.Sprintf("has a value for key %s that is not a valid Go string (a backslash inside a tag value is written as two, so an escaped comma is \\\\,)", key)
		}
		tag = tag[i+1:]
	}
	return ""
}

// jsonType is the JSON Schema type the reflector gives a field of type t,
// which decides which jsonschema tag keys it reads: "" when it cannot be
// known from the Go type alone (a type with its own JSONSchema method).
func jsonType(t types.Type, texts model.TextTypes) string {
	for {
		p, ok := types.Unalias(t).(*types.Pointer)
		if !ok {
			break
		}
		t = p.Elem()
	}
	if elem, ok := model.NullableElem(t); ok {
		return jsonType(elem, texts) // its tags are its value's
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		switch {
		case n.Obj().Pkg() != nil && (n.Obj().Pkg().Path()+"."+n.Obj().Name() == "time.Time" || n.Obj().Pkg().Path()+"."+n.Obj().Name() == "time.Duration"):
			return "string"
		case model.IsTextType(n, texts):
			return "string"
		case knownLeaf(n), hasSchemaMethod(n):
			return ""
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return "string"
		case u.Info()&types.IsInteger != 0:
			return "integer"
		case u.Info()&types.IsFloat != 0:
			return "number"
		case u.Info()&types.IsBoolean != 0:
			return "boolean"
		}
	case *types.Slice:
		if b, ok := types.Unalias(u.Elem()).(*types.Basic); ok && b.Kind() == types.Byte {
			return "string" // base64 text
		}
		return "array"
	case *types.Array:
		return "array"
	case *types.Struct, *types.Map:
		return "object"
	}
	return ""
}

func hasSchemaMethod(n *types.Named) bool {
	return model.HasMethod(n, "JSONSchema") || model.HasMethod(n, "JSONSchemaAlias")
}

// elemType is the element type of a slice or array type, else nil.
func elemType(t types.Type) types.Type {
	for {
		p, ok := types.Unalias(t).(*types.Pointer)
		if !ok {
			break
		}
		t = p.Elem()
	}
	switch u := t.Underlying().(type) {
	case *types.Slice:
		return u.Elem()
	case *types.Array:
		return u.Elem()
	}
	return nil
}

// Tag keys the reflector reads: on any field, and by the JSON type of the
// field (each keyword's rule names its types); the counts, which take a
// whole number, and the numeric bounds, which take a number.
var (
	genericTagKeys = set("title", "description", "type", "anchor", "oneof_required", "anyof_required", "oneof_ref", "oneof_type", "anyof_ref", "anyof_type")
	typeTagKeys    = func() map[string]map[string]bool {
		m := map[string]map[string]bool{"string": {}, "number": {}, "integer": {}, "array": {}, "boolean": {}, "object": {}}
		for typ := range m {
			m[typ] = set(schemamodel.With(func(r schemamodel.Rule) bool { return slices.Contains(r.Tags, typ) })...)
		}
		return m
	}()
	countKeys  = set(schemamodel.With(func(r schemamodel.Rule) bool { return r.Bound.Unit != "" && len(r.Tags) > 0 })...)
	numberKeys = set(schemamodel.With(func(r schemamodel.Rule) bool { return r.Bound.Words != "" && r.Bound.Unit == "" })...)
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// schemaPieceProblem reports why the reflector would not read piece (one
// comma-separated piece of a field's jsonschema tag) into the schema of a
// field of type t, or "".
func schemaPieceProblem(piece string, t types.Type, texts model.TextTypes) string {
	if piece == "" || bareSchemaTags[piece] {
		return ""
	}
	key, val, ok := strings.Cut(piece, "=")
	if !ok {
		return fmt.Sprintf("%q is not key=value: the schema reflector cuts tags at every comma, so a comma "+
			"inside the value before it cut that value short; write it as \\\\, in the tag (pattern=^[0-9]{3\\\\,}$)", piece)
	}
	if genericTagKeys[key] {
		return ""
	}
	typ := jsonType(t, texts)
	if typ == "" {
		return "" // the type's own JSONSchema method decides; its schema is checked as any other
	}
	keys, elem := typeTagKeys[typ], ""
	if typ == "array" && !keys[key] {
		// The reflector hands keys it does not read for the array to its items.
		if et := elemType(t); et != nil {
			if elem = jsonType(et, texts); elem != "" && elem != "array" {
				keys = typeTagKeys[elem]
			}
		}
	}
	if !keys[key] {
		return fmt.Sprintf("%q: the schema reflector does not read %s for a field of JSON type %s, so it would be dropped", piece, key, typ)
	}
	numeric := typ == "number" || typ == "integer" || elem == "number" || elem == "integer"
	switch {
	case countKeys[key]:
		if _, err := strconv.ParseUint(val, 10, 64); err != nil {
			return fmt.Sprintf("%q: %s takes a whole number, so the reflector would drop it", piece, key)
		}
	case numberKeys[key] || (numeric && (key == "enum" || key == "default" || key == "example")):
		if strings.Contains(val, "=") || !isNumber(val) {
			return fmt.Sprintf("%q: %s takes a number, so the reflector would drop it", piece, key)
		}
	case typ == "array" && strings.Contains(val, "="):
		return fmt.Sprintf("%q: the reflector reads no = inside an array field's value, so it would drop it", piece)
	}
	return ""
}

// isNumber reports whether s is a number the reflector takes (a JSON
// number Go can parse).
func isNumber(s string) bool {
	n := json.Number(s)
	if _, err := n.Int64(); err == nil {
		return true
	}
	_, err := n.Float64()
	return err == nil
}
