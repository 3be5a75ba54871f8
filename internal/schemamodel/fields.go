package schemamodel

import (
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// field is how one typed keyword is read, asked after, cleared and written.
// read reads the keyword's value, always to its end, into s; false when the
// value is not of the keyword's JSON type (the keyword is then kept raw in
// Other, and s unchanged).
type field struct {
	read    func(r *reader, s *Schema) bool
	present func(s *Schema) bool
	clear   func(s *Schema)
	encode  func(enc *jsontext.Encoder, s *Schema, e encoding) error
	number  func(s *Schema) *Number // a numeric keyword's field
}

// fields are the typed keywords, by name, and fieldNames the same sorted:
// the rows of rules that have a field, gathered in init, as reading a
// subschema reads fields.
var (
	fields     map[string]field
	fieldNames []string
)

func init() {
	fields = map[string]field{}
	for _, r := range rules {
		if r.field.read != nil {
			fields[r.Name] = r.field
		}
	}
	fieldNames = slices.Sorted(maps.Keys(fields))
}

// The typed keywords whose reading is their own; the others are read by
// kind (schemaField, listField, numberField, stringField).
var (
	typeField = field{
		read: func(r *reader, s *Schema) bool {
			if r.dec.PeekKind() == '"' {
				s.Type = Types{r.token().String()}
				return true
			}
			l, ok := r.strings()
			if ok {
				s.Type = l
			}
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
	}
	enumField = field{
		read: func(r *reader, s *Schema) bool {
			if r.dec.PeekKind() != '[' {
				r.skip()
				return false
			}
			v, err := DecodeValue(r.value())
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
	}
	constField = field{
		read: func(r *reader, s *Schema) bool {
			v, err := DecodeValue(r.value())
			if err != nil {
				return false
			}
			s.Const = &v
			return true
		},
		present: func(s *Schema) bool { return s.Const != nil },
		clear:   func(s *Schema) { s.Const = nil },
		encode:  func(enc *jsontext.Encoder, s *Schema, _ encoding) error { return encodeValue(enc, *s.Const) },
	}
	propertiesField = field{
		read:    readProperties,
		present: func(s *Schema) bool { return s.Properties != nil },
		clear:   func(s *Schema) { s.Properties = nil },
		encode:  encodeProperties,
	}
	requiredField = field{
		read: func(r *reader, s *Schema) bool {
			l, ok := r.strings()
			if ok {
				s.Required = l
			}
			return ok
		},
		present: func(s *Schema) bool { return s.Required != nil },
		clear:   func(s *Schema) { s.Required = nil },
		encode:  func(enc *jsontext.Encoder, s *Schema, _ encoding) error { return writeStrings(enc, s.Required) },
	}
	uniqueItemsField = field{
		read: func(r *reader, s *Schema) bool {
			if k := r.dec.PeekKind(); k != 't' && k != 'f' {
				r.skip()
				return false
			}
			u := r.token().Bool()
			s.UniqueItems = &u
			return true
		},
		present: func(s *Schema) bool { return s.UniqueItems != nil },
		clear:   func(s *Schema) { s.UniqueItems = nil },
		encode: func(enc *jsontext.Encoder, s *Schema, _ encoding) error {
			return enc.WriteToken(jsontext.Bool(*s.UniqueItems))
		},
	}
)

func schemaField(at func(*Schema) **Schema) field {
	return field{
		read: func(r *reader, s *Schema) bool {
			sub, ok := r.schema()
			if ok {
				*at(s) = sub
			}
			return ok
		},
		present: func(s *Schema) bool { return *at(s) != nil },
		clear:   func(s *Schema) { *at(s) = nil },
		encode:  func(enc *jsontext.Encoder, s *Schema, e encoding) error { return (*at(s)).write(enc, e) },
	}
}

func listField(at func(*Schema) *[]*Schema) field {
	return field{
		read: func(r *reader, s *Schema) bool {
			list, ok := r.schemas()
			if ok {
				*at(s) = list
			}
			return ok
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
		read: func(r *reader, s *Schema) bool {
			if r.dec.PeekKind() != '0' {
				r.skip()
				return false
			}
			*at(s) = Number(r.value())
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
		read: func(r *reader, s *Schema) bool {
			if r.dec.PeekKind() != '"' {
				r.skip()
				return false
			}
			v := r.token().String()
			if v == "" {
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

// readProperties reads an object of schemas, in the order written.
func readProperties(r *reader, s *Schema) bool {
	if r.dec.PeekKind() != '{' {
		r.skip()
		return false
	}
	r.token()
	props, ok := []Property{}, true
	for r.more() {
		name := r.token().String()
		sub, isSchema := r.schema()
		props, ok = append(props, Property{name, sub}), ok && isSchema
	}
	r.token()
	if ok {
		s.Properties = props
	}
	return ok
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
