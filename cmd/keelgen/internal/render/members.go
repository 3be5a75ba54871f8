package render

import (
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// field is one JSON member of a struct, as json v2 lays it out.
type field struct {
	json      string
	access    []string // selectors from the struct value
	typ       types.Type
	omitEmpty bool
	omitZero  bool
	pos       token.Pos
	tag       string // its json tag, as written
}

// structFields lists the members of s: exported fields by their json
// names, embedded structs without a name promoted.
func (g *codecs) structFields(s *types.Struct, access []string, ptr string) []field {
	var out []field
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		name, opts, skip := model.JSONName(f, s.Tag(i))
		if skip {
			continue
		}
		if f.Embedded() && name == "" {
			st, ok := types.Unalias(f.Type()).Underlying().(*types.Struct)
			if _, isPtr := types.Unalias(f.Type()).(*types.Pointer); isPtr || !ok {
				g.fail(ptr, "embedded field %s must be a struct value to be promoted", f.Name())
				continue
			}
			sub := access
			if f.Exported() {
				sub = append(slices.Clone(access), f.Name())
			}
			out = append(out, g.structFields(st, sub, ptr)...)
			continue
		}
		if !f.Exported() {
			continue
		}
		if name == "" {
			name = f.Name()
		}
		fd := field{json: name, access: append(slices.Clone(access), f.Name()), typ: f.Type(), pos: f.Pos(), tag: reflect.StructTag(s.Tag(i)).Get("json")}
		for _, o := range opts {
			switch o {
			case "":
			case "omitempty":
				fd.omitEmpty = true
			case "omitzero":
				fd.omitZero = true
			default:
				g.fail(ptr+"/"+name, "json tag option %q is not supported by generated code", o)
			}
		}
		out = append(out, fd)
	}
	return out
}

// members pairs the fields of a struct type with its schema's properties.
func (g *codecs) members(t types.Type, n node, ptr string) ([]field, []node, map[string]bool) {
	var st *types.Struct
	if e, emitted := t.(emittedArgs); emitted {
		var fields []field
		var nodes []node
		for _, p := range e.tool.Params {
			fields = append(fields, field{json: p.JSONName, access: []string{p.Field}, typ: p.Type})
			nodes = append(nodes, g.node(n.Property(p.JSONName)))
		}
		return fields, nodes, g.required(n, fields, ptr)
	}
	st = types.Unalias(t).Underlying().(*types.Struct)
	fields := g.structFields(st, nil, ptr)
	seen := map[string]bool{}
	var nodes []node
	for _, f := range fields {
		if seen[f.json] {
			g.fail(ptr, "two fields have the JSON name %q", f.json)
		}
		seen[f.json] = true
		p := n.Property(f.json)
		if p == nil {
			g.fail(ptr, "field %s has no property %q in the schema", strings.Join(f.access, "."), f.json)
		}
		nodes = append(nodes, g.node(p))
	}
	for _, name := range slices.Sorted(slices.Values(n.PropertyNames())) {
		if !seen[name] {
			g.fail(ptr, "the schema declares %q, which no field of %s has", name, types.TypeString(t, qualifier))
		}
	}
	return fields, nodes, g.required(n, fields, ptr)
}

func (g *codecs) required(n node, fields []field, ptr string) map[string]bool {
	req := map[string]bool{}
	for _, name := range n.Required {
		if !slices.ContainsFunc(fields, func(f field) bool { return f.json == name }) {
			g.fail(ptr, "required member %q is no field", name)
		}
		req[name] = true
	}
	if n.Has("additionalProperties") && !n.AdditionalProperties.IsFalse() {
		g.fail(ptr, "additionalProperties must be false for a struct: generated code refuses unknown members")
	}
	for _, k := range []string{"minProperties", "maxProperties"} {
		if n.Has(k) {
			g.fail(ptr, "keyword %q on a struct cannot be checked by generated code", k)
		}
	}
	return req
}

func ptrTo(ptr, name string) string { return string(jsontext.Pointer(ptr).AppendToken(name)) }

// atField is the planner for f's value: the same side, its diagnostics
// pointing at f.
func (g *codecs) atField(f field) *codecs {
	h := *g
	if f.pos.IsValid() {
		h.at = f.pos
	}
	return &h
}
