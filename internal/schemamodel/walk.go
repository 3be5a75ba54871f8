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
			shape := rawApplicators[kw]
			if a, ok := s.applied[kw]; ok && sameText(a.raw, raw) {
				a.holder.walkHeld(shape, at, fn)
			} else if holder := newReader(raw).applicator(shape); holder != nil {
				holder.walkHeld(shape, at, fn)
			}
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

// applied is a raw applicator's subschemas (in holder: Not for one,
// Properties for an object of them, AllOf for a list) and the text they
// were read from.
type applied struct {
	raw    jsontext.Value
	holder *Schema
}

// sameText reports whether a and b are one slice of one text: the value
// the subschemas were read from is still the keyword's.
func sameText(a, b jsontext.Value) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// walkHeld walks the subschemas s holds as a holder of the given shape.
func (s *Schema) walkHeld(shape byte, ptr jsontext.Pointer, fn func(*Schema, jsontext.Pointer)) {
	switch shape {
	case 's':
		s.Not.walk(ptr, fn)
	case '{':
		for _, p := range s.Properties {
			p.Schema.walk(ptr.AppendToken(p.Name), fn)
		}
	case '[':
		for i, sub := range s.AllOf {
			sub.walk(ptr.AppendToken(strconv.Itoa(i)), fn)
		}
	}
}
