package gen

import (
	"fmt"
	"go/types"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

// RequiredReport lists, for keelgen -required, every member of each tool's
// arguments as required or optional, and why: what a team porting structs
// from the go-sdk or mcp-go reads to see which members changed. keel reads
// a struct field without omitempty or omitzero in its json tag as required
// (as the go-sdk does; mcp-go's members are optional unless declared
// mcp.Required()), and a handler's plain parameter as required.
func requiredReport(pkg *model.Package, schemas map[string]model.Schemas) []string {
	var out []string
	for _, t := range pkg.Tools {
		walkMembers(schemas[t.Name].Input, true, func(ptr string, _ *schemamodel.Schema, required bool) {
			word := "optional"
			if required {
				word = "required"
			}
			out = append(out, fmt.Sprintf("%s: %s %s (%s)", t.Name, word, ptr, why(t, ptr)))
		})
	}
	return out
}

// why says what makes the member at ptr required or optional: its field's
// json tag, or a handler parameter.
func why(t *model.Tool, ptr string) string {
	tokens := slices.Collect(jsontext.Pointer(ptr).Tokens())
	if t.Form == model.PlainParams && len(tokens) == 1 {
		return "a parameter of " + t.Func
	}
	typ := t.Args
	if t.Form == model.PlainParams {
		i := slices.IndexFunc(t.Params, func(p model.Param) bool { return p.JSONName == tokens[0] })
		if i < 0 {
			return "declared by its type's schema"
		}
		typ, tokens = t.Params[i].Type, tokens[1:]
	}
	var field *types.Var
	var opts []string
	for _, tok := range tokens {
		st := structOf(typ)
		if st == nil {
			if tok == "0" || tok == "*" {
				typ = elemOf(typ)
				continue
			}
			return "declared by its type's schema"
		}
		field, opts = nil, nil
		for i := range st.NumFields() {
			name, o, skip := model.JSONName(st.Field(i), st.Tag(i))
			if name == "" {
				name = st.Field(i).Name()
			}
			if !skip && name == tok {
				field, opts = st.Field(i), o
				break
			}
		}
		if field == nil {
			return "declared by its type's schema"
		}
		typ = field.Type()
	}
	if field == nil {
		return "declared by its type's schema"
	}
	switch {
	case slices.Contains(opts, "omitempty"):
		return "field " + field.Name() + ": omitempty in its json tag"
	case slices.Contains(opts, "omitzero"):
		return "field " + field.Name() + ": omitzero in its json tag"
	}
	return "field " + field.Name() + ": its json tag has no omitempty or omitzero"
}

func structOf(t types.Type) *types.Struct {
	for {
		if p, ok := types.Unalias(t).(*types.Pointer); ok {
			t = p.Elem()
			continue
		}
		st, _ := t.Underlying().(*types.Struct)
		return st
	}
}

func elemOf(t types.Type) types.Type {
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Slice:
		return u.Elem()
	case *types.Array:
		return u.Elem()
	case *types.Map:
		return u.Elem()
	case *types.Pointer:
		return elemOf(u.Elem())
	}
	return t
}
