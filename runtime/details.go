package runtime

import (
	"cmp"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/keelgen/keel/internal/schemamodel"
	"github.com/keelgen/keel/internal/toolrules"
	"github.com/keelgen/keel/runtime/wire"
)

// maxDetails bounds the details of one result.
const maxDetails = 16

// argumentDetails turns why arguments were rejected into Details computed
// from the public input schema only: pointers are cut at the first token the
// schema does not declare (a map key, an unknown member), and no value from
// the call is copied.
func argumentDetails(err error, schema *schemamodel.Schema, args []byte) []Detail {
	var out []Detail
	add := func(loc []string, keyword string) {
		out = append(out, Detail{Pointer: schemaPointer(schema, loc), Keyword: keyword})
	}
	var we *wire.Error
	var ie *inputError
	var ve *jsonschema.ValidationError
	var se *jsonv2.SemanticError
	switch {
	case errors.As(err, &we): // generated code: its pointers name only declared places
		out = append(out, Detail{Pointer: we.Pointer, Keyword: we.Keyword})
	case errors.As(err, &ie):
		add(nil, ie.keyword)
	case errors.As(err, &ve):
		walkLeaves(ve, func(v *jsonschema.ValidationError) {
			switch k := v.ErrorKind.(type) {
			case *kind.Required:
				for _, name := range k.Missing {
					add(append(append([]string(nil), v.InstanceLocation...), name), "required")
				}
			default:
				if path := v.ErrorKind.KeywordPath(); len(path) > 0 {
					add(v.InstanceLocation, path[len(path)-1])
				}
			}
		})
	case errors.As(err, &se):
		add(slices.Collect(se.JSONPointer.Tokens()), "type")
	default:
		add(nil, "json")
	}
	slices.SortFunc(out, func(a, b Detail) int {
		return cmp.Or(strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Keyword, b.Keyword))
	})
	out = compactDetails(out)
	if len(out) > maxDetails {
		out = out[:maxDetails]
	}
	for i := range out {
		out[i].explain(schema, args)
	}
	return out
}

// Bounds of what a Detail repeats of the model's own members.
const (
	maxUnknownMembers   = 8
	maxUnknownNameBytes = 64
)

// explain adds what the public schema says at the detail's place: the
// failed keyword's value, or for a member not declared, which members
// were sent and which are allowed.
func (d *Detail) explain(schema *schemamodel.Schema, args []byte) {
	if schema == nil {
		return
	}
	at, tokens := schemaAt(schema, d.Pointer)
	if at == nil {
		return
	}
	switch d.Keyword {
	case "json", "maxBytes", "maxDepth", "range", "required":
	case "additionalProperties":
		d.Allowed = slices.Sorted(slices.Values(at.PropertyNames()))
		d.Unknown = undeclared(args, tokens, at)
	default:
		if v := at.Keyword(d.Keyword); len(v) > 0 {
			d.Schema = json.RawMessage(v.Clone())
		}
	}
}

// schemaAt is the schema at pointer (which names only declared places,
// through properties and items, and $refs to $defs), and the pointer's
// tokens; nil when it names no schema.
func schemaAt(root *schemamodel.Schema, pointer string) (*schemamodel.Schema, []string) {
	defs := schemamodel.DefsOf(root)
	resolve := func(s *schemamodel.Schema) *schemamodel.Schema {
		if name, ok := schemamodel.Ref(s); ok {
			return defs.Get(name)
		}
		return s
	}
	tokens := slices.Collect(jsontext.Pointer(pointer).Tokens())
	cur := resolve(root)
	for _, tok := range tokens {
		switch {
		case !cur.IsObject():
			return nil, nil
		case cur.Property(tok).IsObject():
			cur = resolve(cur.Property(tok))
		case cur.Items.IsObject():
			cur = resolve(cur.Items)
		default:
			return nil, nil
		}
	}
	if !cur.IsObject() {
		return nil, nil
	}
	return cur, tokens
}

// undeclared lists the members of the object at tokens in args that at
// does not declare, sorted, bounded in count and length.
func undeclared(args []byte, tokens []string, at *schemamodel.Schema) []string {
	var v any
	if jsonv2.Unmarshal(args, &v, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) != nil {
		return nil
	}
	for _, tok := range tokens {
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if at.Property(name).IsObject() {
			continue
		}
		if len(out) == maxUnknownMembers {
			break
		}
		out = append(out, toolrules.BoundText(name, maxUnknownNameBytes))
	}
	return out
}

func walkLeaves(v *jsonschema.ValidationError, leaf func(*jsonschema.ValidationError)) {
	if len(v.Causes) == 0 {
		leaf(v)
		return
	}
	for _, c := range v.Causes {
		walkLeaves(c, leaf)
	}
}

func compactDetails(ds []Detail) []Detail {
	var out []Detail
	for i, d := range ds {
		if i == 0 || d.Pointer != ds[i-1].Pointer || d.Keyword != ds[i-1].Keyword { // before explain: these are all
			out = append(out, d)
		}
	}
	return out
}

// schemaPointer renders loc as an RFC 6901 pointer, keeping only tokens the
// schema declares: property names under "properties" and array indexes
// under "items".
func schemaPointer(schema *schemamodel.Schema, loc []string) string {
	var p jsontext.Pointer
	cur := schema
	for _, tok := range loc {
		if !cur.IsObject() {
			break
		}
		if sub := cur.Property(tok); sub.IsObject() {
			p = p.AppendToken(tok)
			cur = sub
			continue
		}
		if cur.Items.IsObject() {
			if _, err := strconv.ParseUint(tok, 10, 32); err == nil {
				p = p.AppendToken(tok)
				cur = cur.Items
				continue
			}
		}
		break
	}
	return string(p)
}
