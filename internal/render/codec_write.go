package render

import (
	"go/types"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/model"
)

// writer returns the function that checks a value of type t against n and
// writes it, as json v2 would encode it.
func (g *codecs) writer(t types.Type, n node, ptr, hint string) string {
	k, ok := g.kindOf(t, n, ptr)
	if !ok {
		return "writeUnsupported"
	}
	return g.fn(key("write", t, n), "write", hintFor(t, n), hint, func(name string) jen.Code {
		hint := strings.TrimPrefix(name, "write") // what it holds is named after this function
		var body []jen.Code
		switch k {
		case kStruct:
			body = g.writeStruct(t, n, ptr, hint)
		case kPointer:
			body = g.writePointer(t, n, ptr, hint)
		case kSlice:
			body = g.writeSlice(t, n, ptr, hint)
		case kMap:
			body = g.writeMap(t, n, ptr, hint)
		default:
			body = g.writeLeaf(t, k, n, ptr, hint)
		}
		return jen.Func().Id(name).Params(jen.Id("e").Op("*").Qual(wirePkg, "Encoder"), jen.Id("v").Op("*").Add(typeCode(t, g.tool))).
			Error().Block(body...).Line()
	})
}

func (g *codecs) writeLeaf(t types.Type, k kind, n node, ptr, hint string) []jen.Code {
	var body []jen.Code
	switch k {
	case kString:
		if _, basic := types.Unalias(t).(*types.Basic); basic {
			body = append(body, jen.Id("s").Op(":=").Op("*").Id("v"))
		} else {
			body = append(body, jen.Id("s").Op(":=").String().Parens(jen.Op("*").Id("v")))
		}
		body = append(body, emitStringChecks(g.stringChecks(n, ptr, hint), jen.Id("s"))...)
		return append(body, jen.Return(jen.Id("e").Dot("String").Call(jen.Id("s"))))
	case kBool:
		body = append(body, jen.Id("b").Op(":=").Bool().Parens(jen.Op("*").Id("v")))
		body = append(body, emitBoolChecks(boolChecks(n), jen.Id("b"))...)
		body = append(body, jen.Id("e").Dot("Bool").Call(jen.Id("b")))
	case kInt, kUint:
		body = append(body, jen.Id("x").Op(":=").Op("*").Id("v"))
		body = append(body, emitIntChecks(intChecks(n, t, k), jen.Id("x"))...)
		if k == kInt {
			body = append(body, jen.Id("e").Dot("Int").Call(jen.Int64().Parens(jen.Id("x"))))
		} else {
			body = append(body, jen.Id("e").Dot("Uint").Call(jen.Uint64().Parens(jen.Id("x"))))
		}
	case kFloat:
		b := bits(t)
		f := jen.Op("*").Id("v")
		if b, basic := types.Unalias(t).(*types.Basic); !basic || b.Kind() != types.Float64 {
			f = jen.Float64().Parens(f)
		}
		checks := g.floatChecks(n, b, ptr)
		if len(checks) == 0 {
			return []jen.Code{jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("e").Dot("Float").Call(f, jen.Lit(b)), jen.Return(jen.Err())}
		}
		lit := jen.Id("_")
		if needsLiteral(checks) {
			lit = jen.Id("lit")
		}
		body = append(body,
			jen.Id("f").Op(":=").Add(f),
			jen.List(lit, jen.Err()).Op(":=").Id("e").Dot("Float").Call(jen.Id("f"), jen.Lit(b)),
			errReturn())
		body = append(body, emitFloatChecks(checks, jen.Id("f"), jen.Id("lit"))...)
	case kDuration:
		body = append(body, jen.Id("s").Op(":=").Id("v").Dot("String").Call())
		body = append(body, emitStringChecks(g.stringChecks(n, ptr, hint), jen.Id("s"))...)
		return append(body, jen.Return(jen.Id("e").Dot("String").Call(jen.Id("s"))))
	case kBytes:
		body = append(body, nilCheck(n, "byte slice"),
			jen.Id("s").Op(":=").Qual("encoding/base64", "StdEncoding").Dot("EncodeToString").Call(jen.Op("*").Id("v")))
		body = append(body, emitStringChecks(g.stringChecks(n, ptr, hint), jen.Id("s"))...)
		return append(body, jen.Return(jen.Id("e").Dot("String").Call(jen.Id("s"))))
	case kText:
		// The type's own text, then the schema's string keywords on it.
		body = append(body,
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("v").Dot("MarshalText").Call(),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("format")))),
			jen.Id("s").Op(":=").String().Parens(jen.Id("b")))
		body = append(body, emitStringChecks(g.stringChecks(n, ptr, hint), jen.Id("s"))...)
		return append(body, jen.Return(jen.Id("e").Dot("String").Call(jen.Id("s"))))
	case kTime:
		g.onlyKeywords(n, ptr, "date-time", "type", "format")
		return []jen.Code{jen.Return(jen.Id("e").Dot("Time").Call(jen.Op("*").Id("v")))}
	case kRaw:
		g.onlyKeywords(n, ptr, "", "")
		return []jen.Code{jen.Return(jen.Id("e").Dot("Raw").Call(jen.Op("*").Id("v")))}
	}
	return append(body, jen.Return(jen.Nil()))
}

// nilCheck writes null for a nil pointer, slice or map the schema allows
// null for, and refuses it otherwise.
func nilCheck(n node, what string) jen.Code {
	if nullable(n) {
		return jen.If(jen.Op("*").Id("v").Op("==").Nil()).Block(jen.Id("e").Dot("Null").Call(), jen.Return(jen.Nil()))
	}
	return jen.If(jen.Op("*").Id("v").Op("==").Nil()).Block(
		jen.Return(jen.Qual(wirePkg, "Failf").Call(jen.Lit("type"), jen.Lit("a nil "+what+" is null, which the schema refuses"))))
}

func (g *codecs) writePointer(t types.Type, n node, ptr, hint string) []jen.Code {
	elem := types.Unalias(t).Underlying().(*types.Pointer).Elem()
	write := g.writer(elem, withoutNull(n), ptr, hint)
	return []jen.Code{nilCheck(n, "pointer"), jen.Return(jen.Id(write).Call(jen.Id("e"), jen.Op("*").Id("v")))}
}

func (g *codecs) writeSlice(t types.Type, n node, ptr, hint string) []jen.Code {
	g.checkContainer(n, kSlice, t, ptr)
	elem := types.Unalias(t).Underlying().(*types.Slice).Elem()
	write := g.writer(elem, g.itemsNode(n, ptr), ptr+"/0", hint+"Item")
	body := []jen.Code{nilCheck(n, "slice")}
	body = append(body, emitCountChecks(countChecks(n, "minItems", "maxItems"), jen.Len(jen.Op("*").Id("v")))...)
	body = append(body, emitUnique(g.uniqueCheck(n, elem, ptr), jen.Op("*").Id("v"))...)
	return append(body,
		jen.Id("e").Dot("ArrayStart").Call(),
		jen.For(jen.Id("i").Op(":=").Range().Op("*").Id("v")).Block(
			jen.Id("e").Dot("Elem").Call(),
			jen.If(jen.Err().Op(":=").Id(write).Call(jen.Id("e"), jen.Op("&").Parens(jen.Op("*").Id("v")).Index(jen.Id("i"))), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtIndex").Call(jen.Err(), jen.Id("i"))),
			),
			ifErr(jen.Id("e").Dot("Cap").Call()),
		),
		jen.Id("e").Dot("ArrayEnd").Call(),
		jen.Return(jen.Nil()),
	)
}

func (g *codecs) writeMap(t types.Type, n node, ptr, hint string) []jen.Code {
	g.checkContainer(n, kMap, t, ptr)
	m := types.Unalias(t).Underlying().(*types.Map)
	write := g.writer(m.Elem(), g.valuesNode(n, ptr), ptr+"/*", hint+"Value")
	body := []jen.Code{nilCheck(n, "map")}
	body = append(body, emitCountChecks(countChecks(n, "minProperties", "maxProperties"), jen.Len(jen.Op("*").Id("v")))...)
	return append(body,
		jen.Id("e").Dot("ObjectStart").Call(),
		jen.Comment("Sorted keys: the same result is the same bytes."),
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Qual("slices", "Sorted").Call(jen.Qual("maps", "Keys").Call(jen.Op("*").Id("v")))).Block(
			ifErr(jen.Id("e").Dot("Key").Call(jen.String().Parens(jen.Id("k")))),
			jen.Id("x").Op(":=").Parens(jen.Op("*").Id("v")).Index(jen.Id("k")),
			jen.If(jen.Err().Op(":=").Id(write).Call(jen.Id("e"), jen.Op("&").Id("x")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtKey").Call(jen.Err())),
			),
			ifErr(jen.Id("e").Dot("Cap").Call()),
		),
		jen.Id("e").Dot("ObjectEnd").Call(),
		jen.Return(jen.Nil()),
	)
}

func (g *codecs) writeStruct(t types.Type, n node, ptr, hint string) []jen.Code {
	fields, nodes, required := g.members(t, n, ptr)
	body := []jen.Code{jen.Id("e").Dot("ObjectStart").Call()}
	for i, f := range fields {
		sub := ptrTo(ptr, f.json)
		var write string
		g.atField(f, func() {
			write = g.writer(f.typ, nodes[i], sub, hint+fieldHint(f))
			if k, _ := classify(f.typ, g.pkg.TextTypes); f.omitEmpty && !f.omitZero && (k == kInt || k == kUint || k == kFloat || k == kBool) {
				if kw := zeroBreaks(nodes[i], k); kw != "" {
					g.warn(sub, "omitempty does not omit a zero %s under json v2, and a zero breaks its %s: a zero result is invalid_tool_output; use omitzero",
						jsonTypeOf[k], kw)
				}
			}
		})
		quoted, _ := jsontext.AppendQuote(nil, f.json)
		name := jen.Lit(string(quoted) + ":")
		if !strings.Contains(string(quoted), "`") {
			name = jen.Op("`" + string(quoted) + ":`")
		}
		value := selector(f.access)
		member := []jen.Code{}
		if f.omitEmpty {
			member = append(member, jen.Id("m").Op(":=").Id("e").Dot("Member").Call(jen.Lit(string(quoted)+":")))
		} else {
			member = append(member, jen.Id("e").Dot("Member").Call(name))
		}
		member = append(member, jen.If(jen.Err().Op(":=").Id(write).Call(jen.Id("e"), jen.Op("&").Add(value)), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Qual(wirePkg, "At").Call(jen.Err(), jen.Lit(f.json))),
		))
		missing := jen.Return(jen.Qual(wirePkg, "Missing").Call(jen.Lit(f.json)))
		var conds []jen.Code // when the member is written at all
		if f.omitZero {
			conds = append(conds, g.nonZero(f.typ, value, sub))
		}
		if f.omitEmpty {
			// A value json v2 would omit is not checked: the schema never sees it.
			if c := nonEmpty(f.typ, value); c != nil {
				conds = append(conds, c)
			}
			// What only writing shows to be empty (an object whose members
			// were all omitted, a raw {}) is taken back after.
			member = append(member, jen.Id("e").Dot("OmitEmpty").Call(jen.Id("m")))
			if required[f.json] {
				member = append(member, jen.If(jen.Id("e").Dot("Omitted").Call(jen.Id("m"))).Block(missing))
			}
		}
		if len(conds) == 0 {
			if f.omitEmpty {
				body = append(body, jen.Block(member...)) // m is this member's
				continue
			}
			body = append(body, member...)
			continue
		}
		cond := conds[0]
		if len(conds) == 2 {
			cond = jen.Add(conds[0]).Op("&&").Add(conds[1])
		}
		stmt := jen.If(cond).Block(member...)
		if required[f.json] {
			stmt = stmt.Else().Block(missing)
		}
		body = append(body, stmt)
	}
	return append(body, jen.Id("e").Dot("ObjectEnd").Call(), jen.Return(jen.Nil()))
}

// nonEmpty is the condition under which an omitempty member's value is not
// one json v2 omits without writing it: a non-empty string, slice or map, a
// non-nil pointer to a non-empty string. nil when only writing tells.
func nonEmpty(t types.Type, value jen.Code) jen.Code {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		if u.Info()&types.IsString != 0 {
			return jen.Add(value).Op("!=").Lit("")
		}
	case *types.Slice, *types.Map:
		if k, _ := classify(t, nil); k == kRaw { // no text type is raw
			return nil
		}
		return jen.Len(value).Op(">").Lit(0)
	case *types.Pointer:
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
			return jen.Add(value).Op("!=").Nil().Op("&&").Op("*").Add(value).Op("!=").Lit("")
		}
		return jen.Add(value).Op("!=").Nil()
	}
	return nil
}

// nonZero is the condition under which an omitzero member is written: the
// value's IsZero method, or a comparison with its zero value.
func (g *codecs) nonZero(t types.Type, value jen.Code, ptr string) jen.Code {
	if model.HasMethod(t, "IsZero") {
		return jen.Op("!").Add(value).Dot("IsZero").Call()
	}
	switch u := t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map:
		return jen.Add(value).Op("!=").Nil()
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return jen.Add(value).Op("!=").Lit("")
		case u.Info()&types.IsBoolean != 0:
			return jen.Add(value)
		default:
			return jen.Add(value).Op("!=").Lit(0)
		}
	}
	if types.Comparable(t) {
		return jen.Add(value).Op("!=").Parens(jen.Add(typeCode(t, g.tool)).Values())
	}
	g.fail(ptr, "omitzero on a value that is neither comparable nor has an IsZero method cannot be written by generated code")
	return jen.True()
}
