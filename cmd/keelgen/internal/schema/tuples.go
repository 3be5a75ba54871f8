package schema

import (
	"bytes"
	"fmt"
	"go/types"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

// typeForms rewrites, in doc (the schema of a value of Go type root), what
// the reflector cannot say from the Go type alone:
//   - the schema of each //keel:tuple struct, an object of its fields, as
//     the array it is: its fields' schemas as prefixItems, in field order,
//     and exactly that many items. Each field's schema (its description,
//     its tags' bounds) becomes its item's;
//   - the schema of each //keel:union struct as the value of one of its
//     fields' types: a list of types where the alternatives say no more
//     than their type, else anyOf the alternatives' schemas;
//   - with libraryNulls, the schema of each pointer field of a library's
//     struct that is not omitempty, whose nil the library writes as null:
//     null is added to its type.
func typeForms(doc []byte, root types.Type, pkg *model.Package, libraryNulls bool) ([]byte, error) {
	if (len(pkg.Tuples) == 0 && len(pkg.Unions) == 0 && !libraryNulls) || !bytes.Contains(doc, []byte(`"properties"`)) {
		return doc, nil
	}
	s, err := schemamodel.Parse(doc)
	if err != nil {
		return nil, err
	}
	w := tupleWalk{pkg: pkg, libraryNulls: libraryNulls}
	w.walk(root, s, true)
	if w.err != nil || !w.changed {
		return doc, w.err
	}
	return s.MarshalJSON()
}

type tupleWalk struct {
	pkg          *model.Package
	libraryNulls bool
	changed      bool
	err          error
}

func (w *tupleWalk) walk(t types.Type, n *schemamodel.Schema, root bool) {
	if n == nil || !n.IsObject() || w.err != nil {
		return
	}
	if _, ref := schemamodel.Ref(n); ref {
		return // a recursive type's: render says a tuple there is not one
	}
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Pointer:
		w.walk(u.Elem(), n, false)
	case *types.Slice:
		w.walk(u.Elem(), n.Items, false)
	case *types.Array:
		w.walk(u.Elem(), n.Items, false)
	case *types.Map:
		w.walk(u.Elem(), n.AdditionalProperties, false)
	case *types.Struct:
		if named, ok := types.Unalias(t).(*types.Named); ok && w.pkg.IsUnion(named) {
			if root {
				w.err = fmt.Errorf("%s is a //keel:union, one value; a tool's arguments and result are objects", named.Obj().Name())
				return
			}
			w.union(u, n)
			return
		}
		if named, ok := types.Unalias(t).(*types.Named); ok && w.pkg.IsTuple(named) {
			if root {
				w.err = fmt.Errorf("%s is a //keel:tuple, an array; a tool's arguments and result are objects", named.Obj().Name())
				return
			}
			w.tuple(u, n)
			return
		}
		w.members(u, n)
	}
}

// members walks a struct's fields into their properties (an embedded
// struct's into the same object).
func (w *tupleWalk) members(st *types.Struct, n *schemamodel.Schema) {
	for i := range st.NumFields() {
		f := st.Field(i)
		name, _, skip := model.JSONName(f, st.Tag(i))
		switch {
		case skip:
		case f.Embedded() && name == "":
			if inner, ok := types.Unalias(f.Type()).Underlying().(*types.Struct); ok {
				w.members(inner, n)
			}
		default:
			sub := n.Property(name)
			if w.libraryNulls && w.nilIsNull(f, st.Tag(i), sub) {
				sub.Type = append(sub.Type, "null")
				w.changed = true
			}
			w.walk(f.Type(), sub, false)
		}
	}
}

// nilIsNull reports a library's pointer field, not omitempty, whose
// schema n (of the value it points to) does not yet take null.
func (w *tupleWalk) nilIsNull(f *types.Var, tag string, n *schemamodel.Schema) bool {
	if _, ptr := types.Unalias(f.Type()).(*types.Pointer); !ptr || !f.Exported() || !w.pkg.Library(f.Pkg()) || !n.IsObject() || n.Type == nil || n.Type.Has("null") {
		return false
	}
	_, opts, _ := model.JSONName(f, tag)
	return !slices.Contains(opts, "omitempty") && !slices.Contains(opts, "omitzero")
}

// tuple turns n, the object schema of st, into its array form.
func (w *tupleWalk) tuple(st *types.Struct, n *schemamodel.Schema) {
	var items []byte
	count := 0
	for i := range st.NumFields() {
		f := st.Field(i)
		name, _, skip := model.JSONName(f, st.Tag(i))
		if skip || !f.Exported() {
			continue
		}
		if name == "" {
			name = f.Name()
		}
		item := n.Property(name)
		if item == nil {
			w.err = fmt.Errorf("the schema of tuple field %s is missing", f.Name())
			return
		}
		w.walk(f.Type(), item, false)
		b, err := item.MarshalJSON()
		if err != nil {
			w.err = err
			return
		}
		if count > 0 {
			items = append(items, ',')
		}
		items = append(items, b...)
		count++
	}
	for _, kw := range []string{"properties", "required", "additionalProperties"} {
		n.Delete(kw)
	}
	n.Type = schemamodel.Types{"array"}
	n.SetOther("prefixItems", jsontext.Value("["+string(items)+"]"))
	n.MinItems = schemamodel.Number(strconv.Itoa(count))
	n.MaxItems = n.MinItems
	w.changed = true
}

// union turns n, the object schema of st, into the schema of one value of
// one of its fields' types: ["string", "number"] where each alternative
// says only its type, else anyOf the alternatives' schemas (their bounds,
// their descriptions), in field order.
func (w *tupleWalk) union(st *types.Struct, n *schemamodel.Schema) {
	var alts []*schemamodel.Schema
	onlyTypes := true
	for i := range st.NumFields() {
		f := st.Field(i)
		name, _, _ := model.JSONName(f, st.Tag(i))
		if name == "" {
			name = f.Name()
		}
		alt := n.Property(name)
		if alt == nil {
			w.err = fmt.Errorf("the schema of union field %s is missing", f.Name())
			return
		}
		onlyTypes = onlyTypes && len(alt.Type) == 1 && len(alt.Keywords()) == 1
		alts = append(alts, alt)
	}
	for _, kw := range []string{"properties", "required", "additionalProperties"} {
		n.Delete(kw)
	}
	n.Type = nil
	if onlyTypes {
		for _, alt := range alts {
			n.Type = append(n.Type, alt.Type[0])
		}
	} else {
		n.AnyOf = alts
	}
	w.changed = true
}
