package schemamodel

import (
	"bytes"
	"maps"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// field is how one typed keyword is read, asked after, cleared and written.
// decode reports false when the value is not of the keyword's JSON type
// (the keyword is then kept raw in Other).
type field struct {
	decode  func(s *Schema, raw jsontext.Value) bool
	present func(s *Schema) bool
	clear   func(s *Schema)
	encode  func(enc *jsontext.Encoder, s *Schema, e encoding) error
	number  func(s *Schema) *Number // a numeric keyword's field
}

// fields are the typed keywords, by name, and fieldNames the same sorted;
// set in init, as reading a subschema reads fields.
var (
	fields     map[string]field
	fieldNames []string
)

func init() {
	fields = map[string]field{
		"type": {
			decode: func(s *Schema, raw jsontext.Value) bool {
				if raw.Kind() == '"' {
					var t string
					if jsonv2.Unmarshal(raw, &t) != nil {
						return false
					}
					s.Type = Types{t}
					return true
				}
				l, ok := stringList(raw)
				s.Type = l
				return ok
			},
			present: func(s *Schema) bool { return s.Type != nil },
			clear:   func(s *Schema) { s.Type = nil },
			encode: func(enc *jsontext.Encoder, s *Schema, _ encoding) error {
				if len(s.Type) == 1 {
					return enc.WriteToken(jsontext.String(s.Type[0]))
				}
				return writeStrings(enc, s.Type)
			},
		},
		"enum": {
			decode: func(s *Schema, raw jsontext.Value) bool {
				if raw.Kind() != '[' {
					return false
				}
				v, err := DecodeValue(raw)
				if err != nil {
					return false
				}
				s.Enum, _ = v.([]any)
				if s.Enum == nil {
					s.Enum = []any{}
				}
				return true
			},
			present: func(s *Schema) bool { return s.Enum != nil },
			clear:   func(s *Schema) { s.Enum = nil },
			encode:  func(enc *jsontext.Encoder, s *Schema, _ encoding) error { return encodeValue(enc, s.Enum) },
		},
		"const": {
			decode: func(s *Schema, raw jsontext.Value) bool {
				v, err := DecodeValue(raw)
				if err != nil {
					return false
				}
				s.Const = &v
				return true
			},
			present: func(s *Schema) bool { return s.Const != nil },
			clear:   func(s *Schema) { s.Const = nil },
			encode:  func(enc *jsontext.Encoder, s *Schema, _ encoding) error { return encodeValue(enc, *s.Const) },
		},
		"properties": {
			decode:  decodeProperties,
			present: func(s *Schema) bool { return s.Properties != nil },
			clear:   func(s *Schema) { s.Properties = nil },
			encode:  encodeProperties,
		},
		"required": {
			decode: func(s *Schema, raw jsontext.Value) bool {
				l, ok := stringList(raw)
				s.Required = l
				return ok
			},
			present: func(s *Schema) bool { return s.Required != nil },
			clear:   func(s *Schema) { s.Required = nil },
			encode:  func(enc *jsontext.Encoder, s *Schema, _ encoding) error { return writeStrings(enc, s.Required) },
		},
		"additionalProperties": schemaField(func(s *Schema) **Schema { return &s.AdditionalProperties }),
		"items":                schemaField(func(s *Schema) **Schema { return &s.Items }),
		"not":                  schemaField(func(s *Schema) **Schema { return &s.Not }),
		"allOf":                listField(func(s *Schema) *[]*Schema { return &s.AllOf }),
		"anyOf":                listField(func(s *Schema) *[]*Schema { return &s.AnyOf }),
		"oneOf":                listField(func(s *Schema) *[]*Schema { return &s.OneOf }),
		"minProperties":        numberField(func(s *Schema) *Number { return &s.MinProperties }),
		"maxProperties":        numberField(func(s *Schema) *Number { return &s.MaxProperties }),
		"minItems":             numberField(func(s *Schema) *Number { return &s.MinItems }),
		"maxItems":             numberField(func(s *Schema) *Number { return &s.MaxItems }),
		"minLength":            numberField(func(s *Schema) *Number { return &s.MinLength }),
		"maxLength":            numberField(func(s *Schema) *Number { return &s.MaxLength }),
		"minimum":              numberField(func(s *Schema) *Number { return &s.Minimum }),
		"maximum":              numberField(func(s *Schema) *Number { return &s.Maximum }),
		"exclusiveMinimum":     numberField(func(s *Schema) *Number { return &s.ExclusiveMinimum }),
		"exclusiveMaximum":     numberField(func(s *Schema) *Number { return &s.ExclusiveMaximum }),
		"multipleOf":           numberField(func(s *Schema) *Number { return &s.MultipleOf }),
		"pattern":              stringField(func(s *Schema) *string { return &s.Pattern }),
		"format":               stringField(func(s *Schema) *string { return &s.Format }),
		"contentEncoding":      stringField(func(s *Schema) *string { return &s.ContentEncoding }),
		"contentMediaType":     stringField(func(s *Schema) *string { return &s.ContentMediaType }),
		"title":                stringField(func(s *Schema) *string { return &s.Title }),
		"description":          stringField(func(s *Schema) *string { return &s.Description }),
		"uniqueItems": {
			decode: func(s *Schema, raw jsontext.Value) bool {
				if k := raw.Kind(); k != 't' && k != 'f' {
					return false
				}
				u := raw.Kind() == 't'
				s.UniqueItems = &u
				return true
			},
			present: func(s *Schema) bool { return s.UniqueItems != nil },
			clear:   func(s *Schema) { s.UniqueItems = nil },
			encode: func(enc *jsontext.Encoder, s *Schema, _ encoding) error {
				return enc.WriteToken(jsontext.Bool(*s.UniqueItems))
			},
		},
	}
	fieldNames = slices.Sorted(maps.Keys(fields))
}

func schemaField(at func(*Schema) **Schema) field {
	return field{
		decode: func(s *Schema, raw jsontext.Value) bool {
			sub, err := parse(raw)
			*at(s) = sub
			return err == nil
		},
		present: func(s *Schema) bool { return *at(s) != nil },
		clear:   func(s *Schema) { *at(s) = nil },
		encode:  func(enc *jsontext.Encoder, s *Schema, e encoding) error { return (*at(s)).write(enc, e) },
	}
}

func listField(at func(*Schema) *[]*Schema) field {
	return field{
		decode: func(s *Schema, raw jsontext.Value) bool {
			var items []jsontext.Value
			if raw.Kind() != '[' || jsonv2.Unmarshal(raw, &items) != nil {
				return false
			}
			list := make([]*Schema, len(items))
			for i, item := range items {
				sub, err := parse(item)
				if err != nil {
					return false
				}
				list[i] = sub
			}
			*at(s) = list
			return true
		},
		present: func(s *Schema) bool { return *at(s) != nil },
		clear:   func(s *Schema) { *at(s) = nil },
		encode: func(enc *jsontext.Encoder, s *Schema, e encoding) error {
			if err := enc.WriteToken(jsontext.BeginArray); err != nil {
				return err
			}
			for _, sub := range *at(s) {
				if err := sub.write(enc, e); err != nil {
					return err
				}
			}
			return enc.WriteToken(jsontext.EndArray)
		},
	}
}

func numberField(at func(*Schema) *Number) field {
	return field{
		decode: func(s *Schema, raw jsontext.Value) bool {
			if raw.Kind() != '0' {
				return false
			}
			*at(s) = Number(raw)
			return true
		},
		present: func(s *Schema) bool { return *at(s) != "" },
		clear:   func(s *Schema) { *at(s) = "" },
		encode: func(enc *jsontext.Encoder, s *Schema, _ encoding) error {
			return enc.WriteValue(jsontext.Value(*at(s)))
		},
		number: at,
	}
}

// stringField reads a string keyword; an empty one is kept raw in Other, so
// that "" stays distinct from absent.
func stringField(at func(*Schema) *string) field {
	return field{
		decode: func(s *Schema, raw jsontext.Value) bool {
			var v string
			if raw.Kind() != '"' || jsonv2.Unmarshal(raw, &v) != nil || v == "" {
				return false
			}
			*at(s) = v
			return true
		},
		present: func(s *Schema) bool { return *at(s) != "" },
		clear:   func(s *Schema) { *at(s) = "" },
		encode: func(enc *jsontext.Encoder, s *Schema, _ encoding) error {
			return enc.WriteToken(jsontext.String(*at(s)))
		},
	}
}

func decodeProperties(s *Schema, raw jsontext.Value) bool {
	if raw.Kind() != '{' {
		return false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	props := []Property{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return false
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			return false
		}
		sub, err := parse(v.Clone())
		if err != nil {
			return false
		}
		props = append(props, Property{name, sub})
	}
	s.Properties = props
	return true
}

func encodeProperties(enc *jsontext.Encoder, s *Schema, e encoding) error {
	props := s.Properties
	if e.sorted {
		props = slices.Clone(props)
		slices.SortFunc(props, func(a, b Property) int { return strings.Compare(a.Name, b.Name) })
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, p := range props {
		if err := enc.WriteToken(jsontext.String(p.Name)); err != nil {
			return err
		}
		if err := p.Schema.write(enc, e); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// stringList reads a list of strings; ok is false for anything else.
func stringList(raw jsontext.Value) ([]string, bool) {
	var l []string
	if raw.Kind() != '[' || jsonv2.Unmarshal(raw, &l) != nil {
		return nil, false
	}
	if l == nil {
		l = []string{}
	}
	return l, true
}

func writeStrings(enc *jsontext.Encoder, l []string) error {
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for _, x := range l {
		if err := enc.WriteToken(jsontext.String(x)); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndArray)
}
