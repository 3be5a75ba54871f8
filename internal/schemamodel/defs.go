package schemamodel

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// DefsPrefix starts every $ref keel writes: to a schema of the root's $defs.
const DefsPrefix = "#/$defs/"

// Defs are the schemas of a root's $defs, by name; Names keeps their order.
type Defs struct {
	Names   []string
	schemas map[string]*Schema
}

// DefsOf reads root's $defs; none when it has none.
func DefsOf(root *Schema) Defs {
	d := Defs{schemas: map[string]*Schema{}}
	raw, ok := root.OtherValue("$defs")
	if !ok || raw.Kind() != '{' {
		return d
	}
	holder := newReader(raw).applicator('{')
	if holder == nil {
		return d
	}
	for _, p := range holder.Properties {
		d.Names = append(d.Names, p.Name)
		d.schemas[p.Name] = p.Schema
	}
	return d
}

// Get returns the schema named name, or nil.
func (d Defs) Get(name string) *Schema { return d.schemas[name] }

// Ref returns the name a "#/$defs/name" $ref of s refers to.
func Ref(s *Schema) (string, bool) {
	if s == nil {
		return "", false
	}
	raw, ok := s.OtherValue("$ref")
	if !ok || raw.Kind() != '"' {
		return "", false
	}
	v, err := DecodeValue(raw)
	if err != nil {
		return "", false
	}
	return strings.CutPrefix(v.(string), DefsPrefix)
}

// Resolve returns the schema s stands for: s itself, or, for a $ref to one
// of d, that schema (the very one when the $ref stands alone; with the
// $ref's other keywords laid over a copy of it, a field's description, when
// not). ok is false for a $ref that d cannot resolve.
func (d Defs) Resolve(s *Schema) (out *Schema, ok bool) {
	if _, has := s.OtherValue("$ref"); !has {
		return s, true
	}
	name, isDef := Ref(s)
	def := d.schemas[name]
	if !isDef || def == nil {
		return s, false
	}
	if len(s.Keywords()) == 1 {
		return def, true
	}
	return Merge(def.Clone(), s), true
}

// Of is the schema s stands for (Resolve's), nil for nil: for walks that
// go on with s where a $ref does not resolve.
func (d Defs) Of(s *Schema) *Schema {
	if s == nil {
		return nil
	}
	r, _ := d.Resolve(s)
	return r
}

// Merge lays the keywords of use (a $ref and its siblings) over def, the
// $ref dropped, and returns def.
func Merge(def, use *Schema) *Schema {
	for _, kw := range use.Keywords() {
		if kw != "$ref" {
			def.SetKeyword(kw, use.Keyword(kw))
		}
	}
	return def
}

// Quote is s as a JSON string.
func Quote(s string) jsontext.Value {
	v, _ := jsontext.AppendQuote(nil, s)
	return v
}
