package ask

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemamodel"
)

// Form is a value a person fills in: its pointer says which form to show
// (ElicitSchema: MCP's restricted schema, a flat object of strings,
// numbers, integers and booleans, with enums, bounds and required members)
// and reads the content of an accepted answer (ReadElicit), which Decode
// checks against that schema before it decodes it.
type Form interface {
	ElicitSchema() []byte
	ReadElicit(content []byte) error
}

// Elicit asks the client's person to fill the form T under key, with
// message as the question. Before the answer came it returns ErrAsked; an
// answer declined or cancelled is ErrDeclined; an answer that does not
// read (against T's schema) is asked for again.
func Elicit[T any, P interface {
	*T
	Form
}](ctx context.Context, key, message string) (T, error) {
	var v T
	schema := P(&v).ElicitSchema()
	req := func() Request {
		p, _ := json.Marshal(struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}{"form", message, schema})
		return Request{Method: MethodElicit, Params: p}
	}
	if _, err := formOf(schema); err != nil {
		return v, err // the handler's own form: a bug, not the client's
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
	if P(&v).ReadElicit(res.Content) != nil {
		var zero T
		return zero, again(ctx, key, req())
	}
	return v, nil
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
