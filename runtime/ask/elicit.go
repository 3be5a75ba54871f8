package ask

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemamodel"
	"github.com/keelgen/keel/runtime/wire"
)

// Form is a value a person fills in, written by hand: its pointer says
// which form to show (ElicitSchema: MCP's restricted schema, a flat object
// of strings, numbers, integers and booleans, with enums, bounds and
// required members) and reads the content of an accepted answer
// (ReadElicit), which Decode checks against that schema before it decodes
// it. A type without these methods gets its form from keelgen, which
// generates the schema and the reader of each type a handler asks for.
type Form interface {
	ElicitSchema() []byte
	ReadElicit(content []byte) error
}

// Elicit asks the client's person to fill the form T under key, with
// message as the question. Before the answer came it returns ErrAsked; an
// answer declined or cancelled is ErrDeclined; an answer that does not
// read (against T's schema) is asked for again.
//
// T is a struct whose fields are the form's members, as an argument
// struct's are: go generate (keelgen) reads each Elicit[T] in the handler
// packages and generates T's schema and reader, so the answer the handler
// gets is checked as arguments are. A *T with Form's methods is its own
// form instead.
func Elicit[T any](ctx context.Context, key, message string) (T, error) {
	var v T
	schema, read, err := formFor(&v)
	if err != nil {
		return v, err // the handler's own form: a bug, not the client's
	}
	req := func() Request {
		p, _ := json.Marshal(struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}{"form", message, schema})
		return Request{Method: MethodElicit, Params: p}
	}
	raw, err := answer(ctx, key, Elicitation, req)
	if err != nil {
		return v, err
	}
	var res struct {
		Action  string         `json:"action"`
		Content jsontext.Value `json:"content"`
	}
	if jsonv2.Unmarshal(raw, &res) != nil {
		return v, again(ctx, key, req())
	}
	switch res.Action {
	case "accept":
	case "decline", "cancel":
		return v, fmt.Errorf("%w (%s)", ErrDeclined, res.Action)
	default:
		return v, again(ctx, key, req())
	}
	if read(res.Content, &v) != nil {
		var zero T
		return zero, again(ctx, key, req())
	}
	return v, nil
}

// registered are the forms keelgen generated, by type.
var registered sync.Map // reflect.Type → registration

type registration struct {
	schema []byte
	read   any // func(*wire.Decoder, *T) error
}

// RegisterForm registers T's form: the schema a client shows (MCP's
// restricted form schema) and the reader that checks and fills T from an
// answer. keelgen's generated code calls it, from the output package's
// init, for each type a handler asks for; a second registration of T with
// another schema panics (two tool sets generated from different code: run
// go generate).
func RegisterForm[T any](schema string, read func(*wire.Decoder, *T) error) {
	if _, err := formOf([]byte(schema)); err != nil {
		panic(fmt.Sprintf("ask: the form of %v: %v", reflect.TypeFor[T](), err))
	}
	prev, loaded := registered.LoadOrStore(reflect.TypeFor[T](), registration{[]byte(schema), read})
	if loaded && string(prev.(registration).schema) != schema {
		panic(fmt.Sprintf("ask: two forms of %v, generated from different code: run go generate", reflect.TypeFor[T]()))
	}
}

// formDepth bounds an answer's nesting: a form is flat.
const formDepth = 4

// formFor is T's form: its own methods (Form), else keelgen's
// registration; a type with neither is the handler's bug.
func formFor[T any](v *T) (schema []byte, read func([]byte, *T) error, err error) {
	if f, ok := any(v).(Form); ok {
		schema = f.ElicitSchema()
		if _, err := formOf(schema); err != nil {
			return nil, nil, err
		}
		return schema, func(content []byte, v *T) error { return any(v).(Form).ReadElicit(content) }, nil
	}
	r, ok := registered.Load(reflect.TypeFor[T]())
	if !ok {
		return nil, nil, fmt.Errorf("ask: %v has no form: run go generate (keelgen generates the form of each type a handler in its packages asks for), or give *%v the methods of ask.Form", reflect.TypeFor[T](), reflect.TypeFor[T]())
	}
	reg := r.(registration)
	readT := reg.read.(func(*wire.Decoder, *T) error)
	return reg.schema, func(content []byte, v *T) error {
		var d wire.Decoder
		d.Reset(content, formDepth)
		if err := readT(&d, v); err != nil {
			return err
		}
		return d.Finish()
	}, nil
}

// Decode checks content, a form's answer, against schema (a Form's
// ElicitSchema) and decodes it into v strictly: every required member, no
// member the form does not have, each of its type, in its enum and bounds;
// a member named twice is refused. A Form's ReadElicit is this call.
func Decode(schema, content []byte, v any) error {
	f, err := formOf(schema)
	if err != nil {
		return err
	}
	var members map[string]jsontext.Value
	if err := jsonv2.Unmarshal(content, &members); err != nil || members == nil {
		return fmt.Errorf("ask: the answer is no JSON object")
	}
	for _, name := range f.Required {
		if _, ok := members[name]; !ok {
			return fmt.Errorf("ask: the answer lacks %q", name)
		}
	}
	for name, raw := range members {
		i := slices.IndexFunc(f.Properties, func(p schemamodel.Property) bool { return p.Name == name })
		if i < 0 {
			return fmt.Errorf("ask: the form has no member %q", name)
		}
		if err := check(f.Properties[i].Schema, raw); err != nil {
			return fmt.Errorf("ask: member %q: %w", name, err)
		}
	}
	return jsonv2.Unmarshal(content, v, jsonv2.RejectUnknownMembers(true))
}

// forms caches each schema's reading: a Form's schema is a constant.
var forms sync.Map // string(schema) → *schemamodel.Schema or error

// formOf reads schema, refusing what MCP's restricted form schema does not
// allow.
func formOf(schema []byte) (*schemamodel.Schema, error) {
	if v, ok := forms.Load(string(schema)); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*schemamodel.Schema), nil
	}
	s, err := readForm(schema)
	if err != nil {
		forms.Store(string(schema), err)
		return nil, err
	}
	forms.Store(string(schema), s)
	return s, nil
}

func readForm(schema []byte) (*schemamodel.Schema, error) {
	s, err := schemamodel.Parse(schema)
	if err != nil {
		return nil, fmt.Errorf("ask: the form's schema does not read: %w", err)
	}
	if len(s.Type) != 1 || s.Type[0] != "object" || len(s.Properties) == 0 {
		return nil, fmt.Errorf("ask: a form's schema is an object with properties")
	}
	for _, p := range s.Properties {
		if m := p.Schema; len(m.Type) != 1 || !slices.Contains([]string{"string", "number", "integer", "boolean"}, m.Type[0]) {
			return nil, fmt.Errorf("ask: form member %q is not one string, number, integer or boolean", p.Name)
		}
	}
	for _, name := range s.Required {
		if !slices.ContainsFunc(s.Properties, func(p schemamodel.Property) bool { return p.Name == name }) {
			return nil, fmt.Errorf("ask: the form requires %q, which it does not have", name)
		}
	}
	return s, nil
}

// check checks one member's value against its schema.
func check(s *schemamodel.Schema, raw jsontext.Value) error {
	switch t := s.Type[0]; t {
	case "string":
		var text string
		if raw.Kind() != '"' || jsonv2.Unmarshal(raw, &text) != nil {
			return fmt.Errorf("not a string")
		}
		n := utf8.RuneCountInString(text)
		if below(s.MinLength, big.NewRat(int64(n), 1)) || above(s.MaxLength, big.NewRat(int64(n), 1)) {
			return fmt.Errorf("a length out of bounds")
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(text)) {
			return fmt.Errorf("not one of the choices")
		}
	case "number", "integer":
		if raw.Kind() == '0' && wire.NumberProblem(raw) != "" { // before math/big, which is quadratic in the literal
			return fmt.Errorf("out of bounds")
		}
		r, ok := new(big.Rat).SetString(string(raw))
		if raw.Kind() != '0' || !ok || (t == "integer" && !r.IsInt()) {
			return fmt.Errorf("not a%s", map[string]string{"number": " number", "integer": "n integer"}[t])
		}
		if below(s.Minimum, r) || above(s.Maximum, r) {
			return fmt.Errorf("out of bounds")
		}
	case "boolean":
		if raw.Kind() != 't' && raw.Kind() != 'f' {
			return fmt.Errorf("not a boolean")
		}
	}
	return nil
}

func below(bound schemamodel.Number, v *big.Rat) bool { return bound != "" && v.Cmp(bound.Rat()) < 0 }
func above(bound schemamodel.Number, v *big.Rat) bool { return bound != "" && v.Cmp(bound.Rat()) > 0 }
