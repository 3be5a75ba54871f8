package render

import (
	"go/types"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/gocode"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

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
	model.WalkTypes(pkg.Tools, pkg.Forms, func(n *types.Named) bool {
		switch k, _ := classify(n, pkg.TextTypes); k {
		case kStruct:
			out = append(out, n)
			return true
		case kPointer, kSlice, kArray, kMap:
			return true
		}
		return false
	})
	return out
}
