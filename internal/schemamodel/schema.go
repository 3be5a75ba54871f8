// Package schemamodel is keel's one typed reading of a JSON Schema: what the
// code renderer plans from, what the provider forms rewrite, what the
// version gate compares, what the Cedar bridge and the executor's null and
// detail walks follow. Every package that reads a schema reads this type,
// and asks it each question through one helper.
//
// It keeps what a general model loses: numbers exactly as written (a bound
// of 9007199254740993 stays that), the order members were written in (a
// model generates properties in the author's order), and every keyword
// present, a keyword keel reads nowhere or one whose value has the wrong
// JSON type included (kept raw in Other), so a reader that must refuse what
// it cannot check sees it. Written back, a schema read and not changed is
// its compact text, but for strings, which are escaped minimally, and a
// one-name type list, written as the name.
package schemamodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Schema is one JSON Schema (draft 2020-12), object or boolean. An absent
// keyword is its field's zero value: nil for a list, a subschema or a
// pointer, "" for a string or a Number. A list written empty is an empty,
// non-nil list.
type Schema struct {
	// Bool is set for a boolean schema: true takes every value, false none.
	// The other fields are then unset.
	Bool *bool

	Type  Types
	Enum  []any // JSON values: string, json.Number, bool, nil, []any, map[string]any
	Const *any

	Properties           []Property // in the order written
	Required             []string
	AdditionalProperties *Schema
	MinProperties        Number
	MaxProperties        Number

	Items       *Schema
	MinItems    Number
	MaxItems    Number
	UniqueItems *bool

	MinLength        Number
	MaxLength        Number
	Pattern          string
	Format           string
	ContentEncoding  string
	ContentMediaType string

	Minimum          Number
	Maximum          Number
	ExclusiveMinimum Number
	ExclusiveMaximum Number
	MultipleOf       Number

	AllOf []*Schema
	AnyOf []*Schema
	OneOf []*Schema
	Not   *Schema

	Title       string
	Description string

	// Other holds every other keyword, and a known one whose value is not
	// of the JSON type its field holds, raw, in the order written.
	Other []Member

	order []string // the keywords as written, for encoding in that order

	// applied holds the subschemas of the raw applicators in Other (see
	// walk.go), read with the rest, by keyword, beside the text they were
	// read from: a walk uses them while that text is still the keyword's.
	applied map[string]applied
}

// Property is one member of "properties".
type Property struct {
	Name   string
	Schema *Schema
}

// Member is one keyword kept as raw JSON.
type Member struct {
	Name  string
	Value jsontext.Value
}

// Number is a JSON number exactly as written; "" when absent.
type Number string

// Rat is the number's exact value; nil for "".
func (n Number) Rat() *big.Rat {
	if n == "" {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

// IsInt reports whether the number is a whole number.
func (n Number) IsInt() bool {
	r := n.Rat()
	return r != nil && r.IsInt()
}

// Number returns the value of a numeric keyword (minimum, maxLength, ...)
// by name; "" when absent or not numeric.
func (s *Schema) Number(keyword string) Number {
	if f, ok := fields[keyword]; ok && f.number != nil {
		return *f.number(s)
	}
	return ""
}

// Types is the "type" keyword: its names, in the order written. One name is
// written as a string, more (or none) as a list.
type Types []string

// Has reports whether the keyword names t.
func (ts Types) Has(t string) bool { return slices.Contains(ts, t) }

// Admits reports whether a value of JSON type t passes the keyword: it is
// absent or names t.
func (ts Types) Admits(t string) bool { return ts == nil || ts.Has(t) }

// Is reports whether the keyword names t alone.
func (ts Types) Is(t string) bool { return len(ts) == 1 && ts[0] == t }

// Without is the keyword less t; nil (absent) when nothing is left.
func (ts Types) Without(t string) Types {
	out := slices.DeleteFunc(slices.Clone(ts), func(s string) bool { return s == t })
	if len(out) == 0 {
		return nil
	}
	return out
}

// True and False are the boolean schemas.
func True() *Schema  { t := true; return &Schema{Bool: &t} }
func False() *Schema { f := false; return &Schema{Bool: &f} }

// IsObject reports whether s is a schema object: present, and not a
// boolean schema.
func (s *Schema) IsObject() bool { return s != nil && s.Bool == nil }

// IsFalse reports whether s is the schema false, which no value passes.
func (s *Schema) IsFalse() bool { return s != nil && s.Bool != nil && !*s.Bool }

// IsTrue reports whether s is the schema true.
func (s *Schema) IsTrue() bool { return s != nil && s.Bool != nil && *s.Bool }

// Property returns the schema of the property name, or nil.
func (s *Schema) Property(name string) *Schema {
	for _, p := range s.Properties {
		if p.Name == name {
			return p.Schema
		}
	}
	return nil
}

// PropertyNames lists the properties in the order written.
func (s *Schema) PropertyNames() []string {
	out := make([]string, len(s.Properties))
	for i, p := range s.Properties {
		out[i] = p.Name
	}
	return out
}

// IsRequired reports whether "required" names name.
func (s *Schema) IsRequired(name string) bool { return slices.Contains(s.Required, name) }

// AllowsNull reports whether null can pass s by its type, enum or const
// alone: s is true, has no type, or names null where it restricts.
func (s *Schema) AllowsNull() bool {
	if s == nil || s.Bool != nil {
		return s == nil || *s.Bool
	}
	if s.Type != nil {
		return s.Type.Has("null")
	}
	if s.Enum != nil {
		return slices.Contains(s.Enum, nil)
	}
	if s.Const != nil {
		return *s.Const == nil
	}
	return true
}

// OtherValue returns the raw value of a keyword kept in Other.
func (s *Schema) OtherValue(name string) (jsontext.Value, bool) {
	for _, m := range s.Other {
		if m.Name == name {
			return m.Value, true
		}
	}
	return nil, false
}

// SetOther sets a keyword kept in Other, in place if present.
func (s *Schema) SetOther(name string, v jsontext.Value) {
	for i, m := range s.Other {
		if m.Name == name {
			s.Other[i].Value = v
			return
		}
	}
	s.Other = append(s.Other, Member{name, v})
}

// SetKeyword sets keyword to the JSON value v, as Parse would read it: into
// its field, or raw into Other.
func (s *Schema) SetKeyword(keyword string, v jsontext.Value) {
	s.Delete(keyword)
	if f, ok := fields[keyword]; ok && readRaw(f, s, v) {
		return
	}
	s.SetOther(keyword, v)
}

// Has reports whether s has the keyword.
func (s *Schema) Has(keyword string) bool {
	if f, ok := fields[keyword]; ok {
		if f.present(s) {
			return true
		}
	}
	_, ok := s.OtherValue(keyword)
	return ok
}

// Delete removes a keyword from s.
func (s *Schema) Delete(keyword string) {
	if f, ok := fields[keyword]; ok {
		f.clear(s)
	}
	s.Other = slices.DeleteFunc(s.Other, func(m Member) bool { return m.Name == keyword })
}

// Keywords lists the keywords of s: those written, in the order written,
// then those set since, sorted.
func (s *Schema) Keywords() []string {
	if s == nil || s.Bool != nil {
		return nil
	}
	var out []string
	for _, k := range s.order {
		if s.Has(k) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	var added []string
	for _, k := range fieldNames {
		if fields[k].present(s) && !slices.Contains(out, k) {
			added = append(added, k)
		}
	}
	for _, m := range s.Other {
		if !slices.Contains(out, m.Name) && !slices.Contains(added, m.Name) {
			added = append(added, m.Name)
		}
	}
	slices.Sort(added)
	return append(out, added...)
}

// Keyword returns the JSON of one keyword's value; nil when absent.
func (s *Schema) Keyword(keyword string) jsontext.Value {
	f, typed := fields[keyword]
	if !typed || !f.present(s) {
		v, _ := s.OtherValue(keyword)
		return v
	}
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	if err := f.encode(enc, s, encoding{}); err != nil {
		return nil
	}
	return jsontext.Value(bytes.TrimSpace(buf.Bytes()))
}

// IsTyped reports whether the model reads keyword into a field of Schema;
// such a keyword is in Other only when its value had the wrong JSON type.
func IsTyped(keyword string) bool {
	_, ok := fields[keyword]
	return ok
}

// Blank returns an empty schema that writes the keywords it is given in
// the order s was written in: for a form built anew from s, which keeps
// its author's order.
func (s *Schema) Blank() *Schema { return &Schema{order: slices.Clone(s.order)} }

// IsAnnotation reports whether a keyword asserts nothing about a value.
func IsAnnotation(keyword string) bool { return annotations[keyword] }

var annotations = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$comment": true, "$schema": true, "$id": true,
	"contentEncoding": true, "contentMediaType": true, Untrusted: true,
}

// Untrusted marks a member of a tool's result whose text came from
// outside the system (a web page, an email, a file a user uploaded): the
// model is told it is data, never instructions, and a conversation it
// entered is tainted (keel's own keyword; jsonschema_extras sets it).
const Untrusted = "x-keel-untrusted"

// IsUntrusted reports whether s carries the Untrusted mark (true, or the
// text "true" that jsonschema_extras writes).
func IsUntrusted(s *Schema) bool {
	v, ok := s.OtherValue(Untrusted)
	return ok && (string(v) == "true" || string(v) == `"true"`)
}

// Clone returns a deep copy of s.
func (s *Schema) Clone() *Schema {
	if s == nil {
		return nil
	}
	c := *s
	if s.Bool != nil {
		b := *s.Bool
		c.Bool = &b
	}
	c.Type = slices.Clone(s.Type)
	c.Enum = slices.Clone(s.Enum) // values are never changed in place
	if s.Const != nil {
		v := *s.Const
		c.Const = &v
	}
	if s.Properties != nil {
		c.Properties = make([]Property, len(s.Properties))
		for i, p := range s.Properties {
			c.Properties[i] = Property{p.Name, p.Schema.Clone()}
		}
	}
	c.Required = slices.Clone(s.Required)
	c.AdditionalProperties = s.AdditionalProperties.Clone()
	c.Items = s.Items.Clone()
	if s.UniqueItems != nil {
		u := *s.UniqueItems
		c.UniqueItems = &u
	}
	c.AllOf, c.AnyOf, c.OneOf = cloneList(s.AllOf), cloneList(s.AnyOf), cloneList(s.OneOf)
	c.Not = s.Not.Clone()
	c.Other = slices.Clone(s.Other)
	c.order = slices.Clone(s.order)
	if s.applied != nil {
		c.applied = map[string]applied{}
		for k, a := range s.applied {
			c.applied[k] = applied{a.raw, a.holder.Clone()}
		}
	}
	return &c
}

func cloneList(l []*Schema) []*Schema {
	if l == nil {
		return nil
	}
	out := make([]*Schema, len(l))
	for i, s := range l {
		out[i] = s.Clone()
	}
	return out
}

// MarshalJSON writes s with its keywords in the order Keywords gives, and
// its properties in theirs.
func (s *Schema) MarshalJSON() ([]byte, error) { return s.encode(encoding{}) }

// Canonical is s with every object's members sorted and, if
// withoutAnnotations, no annotation in s or the subschemas of its fields
// (a raw keyword's value is written as it is, sorted): equal for two
// schemas that check the same, whatever their order and descriptions.
func (s *Schema) Canonical(withoutAnnotations bool) []byte {
	b, err := s.encode(encoding{sorted: true, noAnnotations: withoutAnnotations})
	if err != nil { // unreachable: a parsed or built schema encodes
		panic(err)
	}
	return b
}

type encoding struct{ sorted, noAnnotations bool }

func (s *Schema) encode(e encoding) ([]byte, error) {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	if err := s.write(enc, e); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

func (s *Schema) write(enc *jsontext.Encoder, e encoding) error {
	if s == nil {
		return enc.WriteToken(jsontext.True)
	}
	if s.Bool != nil {
		return enc.WriteToken(jsontext.Bool(*s.Bool))
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	names := s.Keywords()
	if e.sorted {
		slices.Sort(names)
	}
	for _, k := range names {
		if e.noAnnotations && annotations[k] {
			continue
		}
		if err := enc.WriteToken(jsontext.String(k)); err != nil {
			return err
		}
		f, typed := fields[k]
		if typed && f.present(s) {
			if err := f.encode(enc, s, e); err != nil {
				return err
			}
			continue
		}
		v, _ := s.OtherValue(k)
		if err := writeValue(enc, v, e.sorted); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// writeValue writes raw JSON, its members sorted if asked.
func writeValue(enc *jsontext.Encoder, v jsontext.Value, sorted bool) error {
	if sorted {
		v = v.Clone()
		if err := v.Canonicalize(); err != nil {
			return err
		}
	}
	return enc.WriteValue(v)
}

// DecodeValue reads a JSON value as Enum and Const hold it: numbers as
// json.Number, exactly.
func DecodeValue(raw jsontext.Value) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// EncodeValue writes a value as Enum and Const hold it.
func EncodeValue(v any) (jsontext.Value, error) {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	if err := encodeValue(enc, v); err != nil {
		return nil, err
	}
	return jsontext.Value(bytes.TrimSpace(buf.Bytes())), nil
}

func encodeValue(enc *jsontext.Encoder, v any) error {
	switch v := v.(type) {
	case json.Number:
		return enc.WriteValue(jsontext.Value(v))
	case []any:
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, x := range v {
			if err := encodeValue(enc, x); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndArray)
	case map[string]any:
		if err := enc.WriteToken(jsontext.BeginObject); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := enc.WriteToken(jsontext.String(k)); err != nil {
				return err
			}
			if err := encodeValue(enc, v[k]); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndObject)
	}
	b, err := jsonv2.Marshal(v)
	if err != nil {
		return fmt.Errorf("schema value: %w", err)
	}
	return enc.WriteValue(b)
}
