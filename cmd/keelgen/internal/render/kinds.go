package render

import (
	"fmt"
	"go/types"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/gocode"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// kind is how a Go type reads and writes as JSON.
type kind int

const (
	kString kind = iota
	kBool
	kInt
	kUint
	kFloat
	kTime
	kRaw
	kText     // a type with MarshalText and UnmarshalText: a string
	kBytes    // []byte: a string of base64 text
	kDuration // time.Duration: a string in Go's duration syntax
	kPointer
	kNullable // wire.Nullable[T]: absent, null or a T
	kSlice
	kArray // [N]T: a list of exactly N items
	kTuple // a //keel:tuple struct: a list of its fields' values
	kUnion // a //keel:union struct: one value of one of its fields' types
	kMap
	kStruct
	kAny       // an open value of a result: any, written as the JSON data it holds
	kMarshaler // a library's type in a result, written by its own MarshalJSON
	kUnsupported
)

var jsonTypeOf = map[kind]string{kString: "string", kBool: "boolean", kInt: "integer", kUint: "integer", kFloat: "number",
	kTime: "string", kText: "string", kBytes: "string", kDuration: "string", kPointer: "", kNullable: "", kSlice: "array", kArray: "array", kTuple: "array", kUnion: "", kMap: "object", kStruct: "object", kAny: "", kMarshaler: ""}

// classify says how t reads and writes, or why generated code cannot.
func classify(t types.Type, texts model.TextTypes) (kind, string) {
	t = types.Unalias(t)
	if elem, ok := model.NullableElem(t); ok {
		return classifyNullable(elem, texts)
	}
	if n, ok := t.(*types.Named); ok {
		obj := n.Obj()
		if obj.Pkg() != nil {
			switch obj.Pkg().Path() + "." + obj.Name() {
			case "time.Time":
				return kTime, ""
			case "time.Duration":
				return kDuration, ""
			case "encoding/json.RawMessage", "encoding/json/jsontext.Value": // the first an alias of the second under GOEXPERIMENT=jsonv2
				return kRaw, ""
			}
			if !obj.Exported() && obj.Pkg().Name() != "main" {
				return kUnsupported, fmt.Sprintf("type %s is not exported, so the generated package cannot fill it; export it", obj.Name())
			}
		}
		if model.IsTextType(n, texts) {
			return kText, ""
		}
		for _, m := range []string{"UnmarshalJSON", "MarshalJSON", "UnmarshalText", "MarshalText", "UnmarshalJSONFrom", "MarshalJSONTo"} {
			if model.HasMethod(n, m) {
				return kUnsupported, fmt.Sprintf("type %s has its own %s method; generated code checks only values it reads and writes itself "+
					"(give the type a text form, MarshalText and UnmarshalText, and no JSON methods; for a type you cannot change whose "+
					"JSON form is its text form, declare it: //keel:text %s pattern=...; else use a plain type)", obj.Name(), m, obj.Pkg().Path()+"."+obj.Name())
			}
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return kString, ""
		case u.Info()&types.IsBoolean != 0:
			return kBool, ""
		case u.Info()&types.IsUnsigned != 0 && u.Kind() != types.Uintptr:
			return kUint, ""
		case u.Info()&types.IsInteger != 0:
			return kInt, ""
		case u.Info()&types.IsFloat != 0:
			return kFloat, ""
		}
	case *types.Pointer:
		return kPointer, ""
	case *types.Slice:
		if b, ok := types.Unalias(u.Elem()).(*types.Basic); ok && b.Kind() == types.Byte {
			return kBytes, ""
		}
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && b.Kind() == types.Byte {
			return kUnsupported, "a slice of a named byte type has no JSON form keel reads; use []byte (base64 text) or a string"
		}
		return kSlice, ""
	case *types.Map:
		if k, _ := classify(u.Key(), texts); k != kString {
			return kUnsupported, "map keys must be strings"
		}
		return kMap, ""
	case *types.Struct:
		return kStruct, ""
	case *types.Interface:
		if u.Empty() {
			return kAny, ""
		}
	case *types.Array:
		if b, ok := types.Unalias(u.Elem()).Underlying().(*types.Basic); ok && b.Kind() == types.Byte {
			return kUnsupported, "an array of bytes is base64 text to json v2 and a list of numbers to the schema reflector; use []byte"
		}
		return kArray, ""
	}
	return kUnsupported, fmt.Sprintf("type %s has no generated reader", types.TypeString(t, nil))
}

// classifyNullable says how a wire.Nullable of elem reads and writes: one
// of a scalar, or why not.
func classifyNullable(elem types.Type, texts model.TextTypes) (kind, string) {
	switch k, why := classify(elem, texts); k {
	case kString, kBool, kInt, kUint, kFloat, kTime, kText, kDuration:
		return kNullable, ""
	case kUnsupported:
		return k, why
	}
	return kUnsupported, fmt.Sprintf("wire.Nullable holds a string, number, boolean or text type, not %s", types.TypeString(elem, qualifier))
}

// bits is the size of a numeric Go type.
func bits(t types.Type) int {
	b := t.Underlying().(*types.Basic)
	switch b.Kind() {
	case types.Int8, types.Uint8:
		return 8
	case types.Int16, types.Uint16:
		return 16
	case types.Int32, types.Uint32, types.Float32:
		return 32
	}
	return 64
}

func qualifier(p *types.Package) string { return p.Name() }

func typeCode(t types.Type) jen.Code {
	if e, emitted := t.(emittedArgs); emitted {
		return jen.Id(e.tool.ArgsTypeName())
	}
	return gocode.TypeCode(t)
}

// isFloatish: floats, and types containing them, compare differently in Go
// (NaN, -0) than in JSON; uniqueItems is not offered on them.
func isFloatish(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&types.IsFloat != 0
	case *types.Struct, *types.Pointer, *types.Interface, *types.Array:
		return true
	}
	return false
}

// libraryMarshaler reports a type of a library (outside the main module)
// with its own MarshalJSON, which a result may hold as an open value: its
// method writes it, and its schema says nothing of its shape.
func (g *codecs) libraryMarshaler(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && g.side == "output" && g.pkg.Library(n.Obj().Pkg()) && model.HasMethod(n, "MarshalJSON") &&
		!model.HasMethod(n, "JSONSchema")
}
