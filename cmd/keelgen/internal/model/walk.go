package model

import "go/types"

// WalkTypes visits, in the order the tools meet them (arguments, then
// parameters, then result), every named type reachable from the tools'
// JSON values: through pointers, wire.Nullable, slices, arrays, map values
// and the exported or embedded fields of structs. visit says whether to go on into
// a named type's underlying type. Each named type is visited once.
func WalkTypes(tools []*Tool, forms []FormType, visit func(n *types.Named) (descend bool)) {
	seen := map[string]bool{} // by full name: Page[int] and Page[string] are two types
	var walk func(t types.Type)
	walk = func(t types.Type) {
		switch u := types.Unalias(t).(type) {
		case *types.Named:
			if elem, ok := NullableElem(u); ok {
				walk(elem)
				return
			}
			key := types.TypeString(u, nil)
			if seen[key] {
				return
			}
			seen[key] = true
			if visit(u) {
				walk(u.Underlying())
			}
		case *types.Pointer:
			walk(u.Elem())
		case *types.Slice:
			walk(u.Elem())
		case *types.Array:
			walk(u.Elem())
		case *types.Map:
			walk(u.Elem())
		case *types.Struct:
			for i := 0; i < u.NumFields(); i++ {
				if f := u.Field(i); f.Exported() || f.Embedded() {
					walk(f.Type())
				}
			}
		}
	}
	for _, t := range tools {
		if t.Form == StructArgs && t.Args != nil {
			walk(t.Args)
		}
		for _, p := range t.Params {
			walk(p.Type)
		}
		walk(t.Result)
	}
	for _, f := range forms {
		walk(f.Type)
	}
}

// HasMethod reports whether t or *t has a method called name.
func HasMethod(t types.Type, name string) bool {
	ms := types.NewMethodSet(types.NewPointer(t))
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Obj().Name() == name {
			return true
		}
	}
	return false
}

// IsTextType reports whether n is a JSON string through its own text form:
// it has MarshalText and UnmarshalText (on T or *T) and either no JSON
// methods of its own (uuid.UUID, netip.Addr, a team's own types) or a
// //keel:text directive saying its JSON form is its text form (a decimal
// type of another module).
func IsTextType(n *types.Named, declared TextTypes) bool {
	if !HasMethod(n, "MarshalText") || !HasMethod(n, "UnmarshalText") {
		return false
	}
	if _, ok := declared.Of(n); ok {
		return true
	}
	for _, m := range []string{"MarshalJSON", "UnmarshalJSON", "MarshalJSONTo", "UnmarshalJSONFrom", "JSONSchema"} {
		if HasMethod(n, m) {
			return false
		}
	}
	return true
}

// NullablePath is the package of wire.Nullable, keel's member that may be
// absent, null or a value.
const NullablePath = "github.com/keelgen/keel/runtime/wire"

// NullableElem is T of a wire.Nullable[T], and whether t is one.
func NullableElem(t types.Type) (types.Type, bool) {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != NullablePath || n.Obj().Name() != "Nullable" || n.TypeArgs().Len() != 1 {
		return nil, false
	}
	return n.TypeArgs().At(0), true
}
