package schemamodel

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// rawApplicators are the keywords of draft 2020-12 (and draft 7's
// definitions and additionalItems) that hold subschemas but have no field:
// a walk reads them from Other, so no subschema escapes it.
var rawApplicators = map[string]byte{
	"$defs": '{', "definitions": '{', "patternProperties": '{', "dependentSchemas": '{',
	"prefixItems": '[', "items": '[', // items as a list: the older tuple form
	"contains": 's', "if": 's', "then": 's', "else": 's', "propertyNames": 's',
	"unevaluatedItems": 's', "unevaluatedProperties": 's', "additionalItems": 's',
}

// Walk calls fn with s and every subschema under it, each with its JSON
// Pointer from s, depth first in the order keywords were written.
// Subschemas under applicators that have no field are read from Other; a
// value there that is not a schema is passed over (a validator refuses it).
func (s *Schema) Walk(fn func(sub *Schema, ptr jsontext.Pointer)) { s.walk("", fn) }

func (s *Schema) walk(ptr jsontext.Pointer, fn func(*Schema, jsontext.Pointer)) {
	if s == nil {
		return
	}
	fn(s, ptr)
	for _, kw := range s.Keywords() {
		at := ptr.AppendToken(kw)
		if raw, ok := s.OtherValue(kw); ok {
			walkRaw(raw, rawApplicators[kw], at, fn)
			continue
		}
		switch kw {
		case "properties":
			for _, p := range s.Properties {
				p.Schema.walk(at.AppendToken(p.Name), fn)
			}
		case "items":
			s.Items.walk(at, fn)
		case "additionalProperties":
			s.AdditionalProperties.walk(at, fn)
		case "not":
			s.Not.walk(at, fn)
		case "allOf", "anyOf", "oneOf":
			for i, alt := range map[string][]*Schema{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf}[kw] {
				alt.walk(at.AppendToken(strconv.Itoa(i)), fn)
			}
		}
	}
}

// walkRaw walks the subschemas a raw applicator of the given shape holds:
// '{' an object of schemas, '[' a list of them, 's' one; 0 none.
func walkRaw(raw jsontext.Value, shape byte, ptr jsontext.Pointer, fn func(*Schema, jsontext.Pointer)) {
	switch shape {
	case 's':
		if sub, err := parse(raw); err == nil {
			sub.walk(ptr, fn)
		}
	case '{':
		var holder Schema
		if decodeProperties(&holder, raw) {
			for _, p := range holder.Properties {
				p.Schema.walk(ptr.AppendToken(p.Name), fn)
			}
		}
	case '[':
		var holder Schema
		if listField(func(s *Schema) *[]*Schema { return &s.AllOf }).decode(&holder, raw) {
			for i, sub := range holder.AllOf {
				sub.walk(ptr.AppendToken(strconv.Itoa(i)), fn)
			}
		}
	}
}
