package render

import (
	"go/types"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/internal/model"
)

// TypeCode renders a go/types type as jennifer code, qualifying named types
// by import path so jennifer writes the imports.
func TypeCode(t types.Type) jen.Code {
	switch t := t.(type) {
	case *types.Alias:
		if obj := t.Obj(); obj.Pkg() != nil && obj.Exported() {
			return jen.Qual(obj.Pkg().Path(), obj.Name())
		}
		return TypeCode(types.Unalias(t))
	case *types.Named:
		obj := t.Obj()
		var c *jen.Statement
		if obj.Pkg() == nil {
			c = jen.Id(obj.Name()) // error, comparable
		} else {
			c = jen.Qual(obj.Pkg().Path(), obj.Name())
		}
		if args := t.TypeArgs(); args != nil && args.Len() > 0 {
			var list []jen.Code
			for i := 0; i < args.Len(); i++ {
				list = append(list, TypeCode(args.At(i)))
			}
			c = c.Types(list...)
		}
		return c
	case *types.Basic:
		return jen.Id(t.Name())
	case *types.Pointer:
		return jen.Op("*").Add(TypeCode(t.Elem()))
	case *types.Slice:
		return jen.Index().Add(TypeCode(t.Elem()))
	case *types.Array:
		return jen.Index(jen.Lit(int(t.Len()))).Add(TypeCode(t.Elem()))
	case *types.Map:
		return jen.Map(TypeCode(t.Key())).Add(TypeCode(t.Elem()))
	case *types.Struct:
		var fields []jen.Code
		for i := 0; i < t.NumFields(); i++ {
			f := t.Field(i)
			var field *jen.Statement
			if f.Embedded() {
				field = jen.Add(TypeCode(f.Type()))
			} else {
				field = jen.Id(f.Name()).Add(TypeCode(f.Type()))
			}
			if tag := t.Tag(i); tag != "" {
				field = field.Op("`" + tag + "`")
			}
			fields = append(fields, field)
		}
		return jen.Struct(fields...)
	default:
		// The load stage rejects every other type before rendering.
		return jen.Id(t.String())
	}
}

// ArgsStruct renders the argument struct keelgen emits for a handler with
// plain parameters; the schema stage reflects the very same declaration.
func ArgsStruct(t *model.Tool) jen.Code {
	var fields []jen.Code
	for _, p := range t.Params {
		fields = append(fields, jen.Id(p.Field).Add(TypeCode(p.Type)).Tag(map[string]string{"json": p.JSONName}))
	}
	return jen.Commentf("%s is the argument object of %s: one member per parameter of %s.",
		t.ArgsTypeName(), t.Name, t.Func).Line().
		Type().Id(t.ArgsTypeName()).Struct(fields...)
}

// ArgsType is the type the generated handler binding decodes into.
func ArgsType(t *model.Tool) jen.Code {
	if t.Form == model.PlainParams {
		return jen.Id(t.ArgsTypeName())
	}
	return TypeCode(t.Args)
}
