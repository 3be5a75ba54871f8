// Package gocode turns keelgen's model into Go source with jennifer: the
// types of handlers and the argument structs keelgen emits. Both the schema
// stage (its throwaway program) and the render stage write Go through it, so
// the two always describe the same declarations.
package gocode

import (
	"fmt"
	"go/types"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
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
				if strings.Contains(tag, "`") {
					// A raw string cannot hold a backquote: the tag would end
					// there and its rest become Go. A quoted literal holds any tag.
					field = field.Lit(tag)
				} else {
					field = field.Op("`" + tag + "`")
				}
			}
			fields = append(fields, field)
		}
		return jen.Struct(fields...)
	default:
		// The load stage rejects every other type before rendering.
		return jen.Id(t.String())
	}
}

// ArgsStructs renders the argument structs keelgen emits for the handlers
// with plain parameters, in the tools' order; the schema stage reflects the
// very same declarations. A tool whose parameters (names, types,
// descriptions) are those of an earlier tool gets an alias of that tool's
// struct, so the two share one reader.
func ArgsStructs(tools []*model.Tool) []jen.Code {
	var out []jen.Code
	first := map[string]*model.Tool{}
	for _, t := range tools {
		if t.Form != model.PlainParams {
			continue
		}
		k := ArgsKey(t)
		if same, ok := first[k]; ok {
			out = append(out, jen.Commentf("%s is the argument object of %s: the parameters of %s are those of %s.",
				t.ArgsTypeName(), t.Name, t.Func, same.Func).Line().
				Type().Id(t.ArgsTypeName()).Op("=").Id(same.ArgsTypeName()))
			continue
		}
		first[k] = t
		out = append(out, argsStruct(t))
	}
	return out
}

// ArgsKey is the same for two plain-parameter tools whose argument structs
// would be identical.
func ArgsKey(t *model.Tool) string {
	var b strings.Builder
	for _, p := range t.Params {
		fmt.Fprintf(&b, "%s %s %q %q;", p.Field, types.TypeString(p.Type, nil), p.JSONName, p.Description)
	}
	return b.String()
}

// argsStruct renders one argument struct.
func argsStruct(t *model.Tool) jen.Code {
	var fields []jen.Code
	for _, p := range t.Params {
		tag := map[string]string{"json": p.JSONName}
		if p.Description != "" {
			// A backquote cannot stand in a struct tag; the model reads a quote.
			tag["jsonschema_description"] = strings.ReplaceAll(p.Description, "`", "'")
		}
		fields = append(fields, jen.Id(p.Field).Add(TypeCode(p.Type)).Tag(tag))
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

// Packages calls add with the path and name of every package whose named
// types t refers to; seen stops it from walking a type twice.
func Packages(t types.Type, seen map[types.Type]bool, add func(path, name string)) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		if pkg := t.Obj().Pkg(); pkg != nil {
			add(pkg.Path(), pkg.Name())
		}
		Packages(types.Unalias(t), seen, add)
	case *types.Named:
		if pkg := t.Obj().Pkg(); pkg != nil {
			add(pkg.Path(), pkg.Name())
		}
		if args := t.TypeArgs(); args != nil {
			for i := 0; i < args.Len(); i++ {
				Packages(args.At(i), seen, add)
			}
		}
	case *types.Pointer:
		Packages(t.Elem(), seen, add)
	case *types.Slice:
		Packages(t.Elem(), seen, add)
	case *types.Array:
		Packages(t.Elem(), seen, add)
	case *types.Map:
		Packages(t.Key(), seen, add)
		Packages(t.Elem(), seen, add)
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			Packages(t.Field(i).Type(), seen, add)
		}
	}
}

// ContainsItself reports whether a value of named type t can hold another
// value of t, through fields, pointers, slices, arrays and maps: a
// recursive type, whose value may be a cycle.
func ContainsItself(t types.Type) bool {
	target, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	seen := map[types.Type]bool{}
	var reaches func(u types.Type) bool
	reaches = func(u types.Type) bool {
		u = types.Unalias(u)
		if n, ok := u.(*types.Named); ok {
			if types.Identical(n, target) {
				return true
			}
			if seen[n] {
				return false
			}
			seen[n] = true
			u = n.Underlying()
		}
		switch u := u.(type) {
		case *types.Pointer:
			return reaches(u.Elem())
		case *types.Slice:
			return reaches(u.Elem())
		case *types.Array:
			return reaches(u.Elem())
		case *types.Map:
			return reaches(u.Elem())
		case *types.Struct:
			for i := 0; i < u.NumFields(); i++ {
				if reaches(u.Field(i).Type()) {
					return true
				}
			}
		}
		return false
	}
	return reaches(target.Underlying()) // a struct, or a map or slice of itself
}
