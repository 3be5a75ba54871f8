package schemamodel

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// reader reads a schema in one pass over its text: each value once, so
// the time is linear in the size however deep the nesting. A value that
// is not of its keyword's JSON type is read to its end and kept as its
// text, a slice of in.
type reader struct {
	in  []byte
	dec *jsontext.Decoder
	err error
}

func newReader(in []byte) *reader {
	return &reader{in: in, dec: jsontext.NewDecoder(bytes.NewReader(in))}
}

// Parse reads a schema: an object or a boolean. Names must be unique and
// the text valid UTF-8.
func Parse(doc []byte) (*Schema, error) {
	in := bytes.Clone(bytes.TrimSpace(doc)) // the Other values are slices of it
	check := jsontext.NewDecoder(bytes.NewReader(in))
	if _, err := check.ReadValue(); err != nil {
		return nil, fmt.Errorf("the schema is not valid JSON: %w", err)
	}
	if _, err := check.ReadToken(); err != io.EOF {
		return nil, errors.New("the schema is not valid JSON: text follows the value")
	}
	r := newReader(in)
	s, ok := r.schema()
	if r.err != nil {
		return nil, r.err
	}
	if !ok {
		return nil, errNotSchema
	}
	return s, nil
}

var errNotSchema = errors.New("the schema is not a JSON object or boolean")

// UnmarshalJSON reads a schema as Parse does.
func (s *Schema) UnmarshalJSON(b []byte) error {
	p, err := Parse(b)
	if err != nil {
		return err
	}
	*s = *p
	return nil
}

func (r *reader) token() jsontext.Token {
	t, err := r.dec.ReadToken()
	if err != nil && r.err == nil {
		r.err = err
	}
	return t
}

func (r *reader) value() jsontext.Value {
	v, err := r.dec.ReadValue()
	if err != nil && r.err == nil {
		r.err = err
	}
	return v
}

func (r *reader) skip() {
	if err := r.dec.SkipValue(); err != nil && r.err == nil {
		r.err = err
	}
}

// more reports whether the object or array being read has another member.
func (r *reader) more() bool {
	k := r.dec.PeekKind()
	return r.err == nil && k != '}' && k != ']' && k != 0
}

// since is the text of the value read last, which began after offset start
// (past any separator and space before it).
func (r *reader) since(start int64) jsontext.Value {
	return jsontext.Value(bytes.TrimLeft(r.in[start:r.dec.InputOffset()], " \t\r\n,:"))
}

// schema reads one value as a schema; false, with the value read, when it
// is not one.
func (r *reader) schema() (*Schema, bool) {
	switch r.dec.PeekKind() {
	case 't':
		r.token()
		return True(), true
	case 'f':
		r.token()
		return False(), true
	case '{':
	default:
		r.skip()
		return nil, false
	}
	r.token()
	s := &Schema{}
	for r.more() {
		name := r.token().String()
		s.order = append(s.order, name)
		start := r.dec.InputOffset()
		f, typed := fields[name]
		if typed && f.read(r, s) {
			continue
		}
		var holder *Schema
		if !typed {
			holder = r.applicator(rawApplicators[name])
		}
		raw := r.since(start)
		s.Other = append(s.Other, Member{name, raw})
		if holder != nil {
			if s.applied == nil {
				s.applied = map[string]applied{}
			}
			s.applied[name] = applied{raw, holder}
		}
	}
	r.token()
	return s, true
}

// schemas reads a list of schemas; false, with the value read, when it is
// not one.
func (r *reader) schemas() ([]*Schema, bool) {
	if r.dec.PeekKind() != '[' {
		r.skip()
		return nil, false
	}
	r.token()
	list, ok := []*Schema{}, true
	for r.more() {
		sub, isSchema := r.schema()
		list, ok = append(list, sub), ok && isSchema
	}
	r.token()
	return list, ok
}

// strings reads a list of strings; false, with the value read, when it is
// not one.
func (r *reader) strings() ([]string, bool) {
	if r.dec.PeekKind() != '[' {
		r.skip()
		return nil, false
	}
	r.token()
	list, ok := []string{}, true
	for r.more() {
		if r.dec.PeekKind() != '"' {
			r.skip()
			ok = false
			continue
		}
		list = append(list, r.token().String())
	}
	r.token()
	return list, ok
}

// readRaw reads one keyword's value from its text into s, as Parse would.
func readRaw(f field, s *Schema, raw jsontext.Value) bool {
	r := newReader(raw)
	return f.read(r, s) && r.err == nil
}

// applicator reads the value of a raw applicator of the given shape (see
// rawApplicators) into a holder of its subschemas; nil, with the value
// read, when it has none or is not of that shape.
func (r *reader) applicator(shape byte) *Schema {
	holder := &Schema{}
	var ok bool
	switch shape {
	case 's':
		holder.Not, ok = r.schema()
	case '{':
		ok = readProperties(r, holder)
	case '[':
		holder.AllOf, ok = r.schemas()
	default:
		r.skip()
	}
	if !ok {
		return nil
	}
	return holder
}
