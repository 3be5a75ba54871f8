package render

import (
	"go/types"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/internal/gocode"
	"github.com/keelgen/keel/internal/model"
)

// shapeChecks renders one compile-time check per struct type the readers
// and writers fill or read field by field: a conversion to the struct as
// keelgen read it. Struct conversion ignores tags but not field names,
// types, order or embedding, so a field added, removed, renamed or retyped
// without go generate stops go build here. A struct with unexported fields
// cannot be spelled in another package; its check is a keyed literal of its
// exported fields, which a removed, renamed or retyped field breaks.
func shapeChecks(f *jen.File, pkg *model.Package) {
	shapes := structShapes(pkg)
	if len(shapes) == 0 {
		return
	}
	f.Comment("Struct shapes as keelgen read them. A field added, removed, renamed or retyped")
	f.Comment("since then fails to compile here: run go generate and review the diff.")
	f.Var().DefsFunc(func(g *jen.Group) {
		for _, n := range shapes {
			st := n.Underlying().(*types.Struct)
			if exact, ok := shapeType(st); ok {
				g.Id("_").Op("=").Add(exact).Call(jen.Add(gocode.TypeCode(n)).Values())
				continue
			}
			g.Id("_").Op("=").Add(gocode.TypeCode(n)).Add(jen.ValuesFunc(func(v *jen.Group) {
				for i := 0; i < st.NumFields(); i++ {
					if fd := st.Field(i); fd.Exported() {
						v.Id(fd.Name()).Op(":").Op("*").New(gocode.TypeCode(fd.Type()))
					}
				}
			}))
		}
	})
}

// shapeType spells s as a struct type literal without tags, or reports that
// it cannot: an unexported field's name belongs to its own package.
func shapeType(s *types.Struct) (jen.Code, bool) {
	var fields []jen.Code
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		if !f.Exported() {
			return nil, false
		}
		t := f.Type()
		if inner, ok := types.Unalias(t).(*types.Struct); ok {
			code, ok := shapeType(inner)
			if !ok {
				return nil, false
			}
			fields = append(fields, jen.Id(f.Name()).Add(code))
			continue
		}
		if f.Embedded() {
			fields = append(fields, gocode.TypeCode(t))
		} else {
			fields = append(fields, jen.Id(f.Name()).Add(gocode.TypeCode(t)))
		}
	}
	return jen.Struct(fields...), true
}

// structShapes lists, in the order the tools meet them, the named struct
// types whose fields generated code reads or writes.
func structShapes(pkg *model.Package) []*types.Named {
	var out []*types.Named
	model.WalkTypes(pkg.Tools, func(n *types.Named) bool {
		switch k, _ := classify(n, pkg.TextTypes); k {
		case kStruct:
			out = append(out, n)
			return true
		case kPointer, kSlice, kMap:
			return true
		}
		return false
	})
	return out
}
