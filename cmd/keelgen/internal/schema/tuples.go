package schema

import (
	"bytes"
	"fmt"
	"go/types"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

// tupleForms rewrites, in doc (the schema of a value of Go type root), the
// schema the reflector wrote for each //keel:tuple struct, an object of
// its fields, as the array it is: its fields' schemas as prefixItems, in
// field order, and exactly that many items. Each field's schema (its
// description, its tags' bounds) becomes its item's.
func tupleForms(doc []byte, root types.Type, pkg *model.Package) ([]byte, error) {
	if len(pkg.Tuples) == 0 || !bytes.Contains(doc, []byte(`"properties"`)) {
		return doc, nil
	}
	s, err := schemamodel.Parse(doc)
	if err != nil {
		return nil, err
	}
	w := tupleWalk{pkg: pkg}
	w.walk(root, s, true)
	if w.err != nil || !w.changed {
		return doc, w.err
	}
	return s.MarshalJSON()
}

type tupleWalk struct {
	pkg     *model.Package
	changed bool
	err     error
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
			w.walk(f.Type(), n.Property(name), false)
		}
	}
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
