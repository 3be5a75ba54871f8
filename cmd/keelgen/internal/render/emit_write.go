package render

import (
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/go-json-experiment/json/jsontext"
)

func emitWritePointer(f *codecFunc) []jen.Code {
	return []jen.Code{nilCheck(f.null, "pointer"), jen.Return(jen.Id(f.elem).Call(jen.Id("e"), jen.Op("*").Id("v")))}
}

// emitWriteNullable writes the value, or null for null and for absent
// (which omitzero leaves out before it gets here).
func emitWriteNullable(f *codecFunc) []jen.Code {
	return []jen.Code{
		jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Id("v").Dot("Get").Call(),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Id("e").Dot("Null").Call(), jen.Return(jen.Nil())),
		jen.Return(jen.Id(f.elem).Call(jen.Id("e"), jen.Op("&").Id("x"))),
	}
}

func emitWriteLeaf(f *codecFunc) []jen.Code {
	writeString := func(body ...jen.Code) []jen.Code {
		body = append(body, emitStringChecks(f.checks, jen.Id("s"))...)
		return append(body, jen.Return(jen.Id("e").Dot("String").Call(jen.Id("s"))))
	}
	var body []jen.Code
	switch f.kind {
	case kString:
		if f.plain {
			return writeString(jen.Id("s").Op(":=").Op("*").Id("v"))
		}
		return writeString(jen.Id("s").Op(":=").String().Parens(jen.Op("*").Id("v")))
	case kBool:
		body = append(body, jen.Id("b").Op(":=").Bool().Parens(jen.Op("*").Id("v")))
		body = append(body, emitBoolChecks(f.checks, jen.Id("b"))...)
		body = append(body, jen.Id("e").Dot("Bool").Call(jen.Id("b")))
	case kInt, kUint:
		body = append(body, jen.Id("x").Op(":=").Op("*").Id("v"))
		body = append(body, emitIntChecks(f.checks, jen.Id("x"))...)
		if f.kind == kInt {
			body = append(body, jen.Id("e").Dot("Int").Call(jen.Int64().Parens(jen.Id("x"))))
		} else {
			body = append(body, jen.Id("e").Dot("Uint").Call(jen.Uint64().Parens(jen.Id("x"))))
		}
	case kFloat:
		x := jen.Op("*").Id("v")
		if !f.plain {
			x = jen.Float64().Parens(x)
		}
		if len(f.checks) == 0 {
			return []jen.Code{jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("e").Dot("Float").Call(x, jen.Lit(f.bits)), jen.Return(jen.Err())}
		}
		lit := jen.Id("_")
		if needsLiteral(f.checks) {
			lit = jen.Id("lit")
		}
		body = append(body,
			jen.Id("f").Op(":=").Add(x),
			jen.List(lit, jen.Err()).Op(":=").Id("e").Dot("Float").Call(jen.Id("f"), jen.Lit(f.bits)),
			errReturn())
		body = append(body, emitFloatChecks(f.checks, jen.Id("f"), jen.Id("lit"))...)
	case kDuration:
		return writeString(jen.Id("s").Op(":=").Id("v").Dot("String").Call())
	case kBytes:
		// A nil []byte is "", as json v2 writes it.
		return writeString(
			jen.Id("s").Op(":=").Qual("encoding/base64", "StdEncoding").Dot("EncodeToString").Call(jen.Op("*").Id("v")))
	case kText:
		// The type's own text, then the schema's string keywords on it.
		return writeString(
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("v").Dot("MarshalText").Call(),
			jen.If(jen.Err().Op("!=").Nil()).Block(returnWireFail("format")),
			jen.Id("s").Op(":=").String().Parens(jen.Id("b")))
	case kTime, kRaw, kAny, kMarshaler:
		return emitWriteOwnForm(f.kind)
	}
	return append(body, jen.Return(jen.Nil()))
}

// emitWriteOwnForm writes a value whose JSON form a library decides: a
// time, a raw value, an open value, a library type by its MarshalJSON
// (checked as one JSON value).
func emitWriteOwnForm(k kind) []jen.Code {
	switch k {
	case kTime:
		return []jen.Code{jen.Return(jen.Id("e").Dot("Time").Call(jen.Op("*").Id("v")))}
	case kRaw:
		return []jen.Code{jen.Return(jen.Id("e").Dot("Raw").Call(jen.Op("*").Id("v")))}
	case kAny:
		return []jen.Code{jen.Return(jen.Id("e").Dot("Any").Call(jen.Op("*").Id("v")))}
	}
	return []jen.Code{
		jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("v").Dot("MarshalJSON").Call(),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Qual(wirePkg, "Failf").Call(jen.Lit("json"), jen.Lit("the type's MarshalJSON failed")))),
		jen.Return(jen.Id("e").Dot("Raw").Call(jen.Id("b"))),
	}
}

// nilCheck writes null for a nil pointer the schema allows null for, and
// refuses it otherwise. (A nil slice or map is written as [] or {}, as json
// v2 writes it: a handler that found nothing returns nil.)
func nilCheck(null bool, what string) jen.Code {
	if null {
		return jen.If(jen.Op("*").Id("v").Op("==").Nil()).Block(jen.Id("e").Dot("Null").Call(), jen.Return(jen.Nil()))
	}
	return jen.If(jen.Op("*").Id("v").Op("==").Nil()).Block(
		jen.Return(jen.Qual(wirePkg, "Failf").Call(jen.Lit("type"), jen.Lit("a nil "+what+" is null, which the schema refuses"))))
}

func emitWriteSlice(f *codecFunc) []jen.Code {
	body := emitEnter(f)
	body = append(body, emitCountChecks(f.counts, jen.Len(jen.Op("*").Id("v")))...)
	body = append(body, emitUnique(f.unique, jen.Op("*").Id("v"))...)
	return append(body, emitWriteItems(f)...)
}

// emitWriteItems writes each item of *v, a slice or an array.
func emitWriteItems(f *codecFunc) []jen.Code {
	return []jen.Code{
		jen.Id("e").Dot("ArrayStart").Call(),
		jen.For(jen.Id("i").Op(":=").Range().Op("*").Id("v")).Block(
			jen.Id("e").Dot("Elem").Call(),
			jen.If(jen.Err().Op(":=").Id(f.elem).Call(jen.Id("e"), jen.Op("&").Parens(jen.Op("*").Id("v")).Index(jen.Id("i"))), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtIndex").Call(jen.Err(), jen.Id("i"))),
			),
			ifErr(jen.Id("e").Dot("Cap").Call()),
		),
		jen.Id("e").Dot("ArrayEnd").Call(),
		jen.Return(jen.Nil()),
	}
}

// emitWriteTuple writes a tuple's fields as its items, in order.
func emitWriteTuple(f *codecFunc) []jen.Code {
	body := append(emitEnter(f), jen.Id("e").Dot("ArrayStart").Call())
	for i, m := range f.members {
		body = append(body,
			jen.Id("e").Dot("Elem").Call(),
			jen.If(jen.Err().Op(":=").Id(m.fn).Call(jen.Id("e"), jen.Op("&").Add(selector(m.access))), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtIndex").Call(jen.Err(), jen.Lit(i))),
			))
	}
	return append(body, jen.Id("e").Dot("ArrayEnd").Call(), jen.Return(jen.Nil()))
}

// emitWriteArray writes every item; its length is its type's.
func emitWriteArray(f *codecFunc) []jen.Code {
	body := emitEnter(f)
	body = append(body, emitUnique(f.unique, jen.Parens(jen.Op("*").Id("v")).Index(jen.Op(":")))...)
	return append(body, emitWriteItems(f)...)
}

func emitWriteMap(f *codecFunc) []jen.Code {
	body := emitEnter(f)
	body = append(body, emitCountChecks(f.counts, jen.Len(jen.Op("*").Id("v")))...)
	return append(body,
		jen.Id("e").Dot("ObjectStart").Call(),
		jen.Comment("Sorted keys: the same result is the same bytes."),
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Qual("slices", "Sorted").Call(jen.Qual("maps", "Keys").Call(jen.Op("*").Id("v")))).Block(
			ifErr(jen.Id("e").Dot("Key").Call(jen.String().Parens(jen.Id("k")))),
			jen.Id("x").Op(":=").Parens(jen.Op("*").Id("v")).Index(jen.Id("k")),
			jen.If(jen.Err().Op(":=").Id(f.elem).Call(jen.Id("e"), jen.Op("&").Id("x")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtKey").Call(jen.Err())),
			),
			ifErr(jen.Id("e").Dot("Cap").Call()),
		),
		jen.Id("e").Dot("ObjectEnd").Call(),
		jen.Return(jen.Nil()),
	)
}

// emitEnter counts a level of a type that contains itself, so that a
// cycle (a map holding itself, a list of itself, a struct through a
// pointer) ends in invalid_tool_output, not in a stack overflow.
func emitEnter(f *codecFunc) []jen.Code {
	if !f.nested {
		return nil
	}
	return []jen.Code{ifErr(jen.Id("e").Dot("Enter").Call()), jen.Defer().Id("e").Dot("Leave").Call()}
}

func emitWriteStruct(f *codecFunc) []jen.Code {
	body := emitEnter(f)
	body = append(body, jen.Id("e").Dot("ObjectStart").Call())
	for _, m := range f.members {
		quoted, _ := jsontext.AppendQuote(nil, m.json)
		name := jen.Lit(string(quoted) + ":")
		if !strings.Contains(string(quoted), "`") {
			name = jen.Op("`" + string(quoted) + ":`")
		}
		value := selector(m.access)
		member := []jen.Code{}
		if m.omitEmpty {
			member = append(member, jen.Id("m").Op(":=").Id("e").Dot("Member").Call(jen.Lit(string(quoted)+":")))
		} else {
			member = append(member, jen.Id("e").Dot("Member").Call(name))
		}
		member = append(member, jen.If(jen.Err().Op(":=").Id(m.fn).Call(jen.Id("e"), jen.Op("&").Add(value)), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Qual(wirePkg, "At").Call(jen.Err(), jen.Lit(m.json))),
		))
		missing := jen.Return(jen.Qual(wirePkg, "Missing").Call(jen.Lit(m.json)))
		var conds []jen.Code // when the member is written at all
		if m.omitZero {
			conds = append(conds, nonZero(m, value))
		}
		if m.omitEmpty {
			// A value json v2 would omit is not checked: the schema never sees it.
			if c := nonEmpty(m.empty, value); c != nil {
				conds = append(conds, c)
			}
			// What only writing shows to be empty (an object whose members
			// were all omitted, a raw {}) is taken back after.
			member = append(member, jen.Id("e").Dot("OmitEmpty").Call(jen.Id("m")))
			if m.required {
				member = append(member, jen.If(jen.Id("e").Dot("Omitted").Call(jen.Id("m"))).Block(missing))
			}
		}
		if len(conds) == 0 {
			if m.omitEmpty {
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
		if m.required {
			stmt = stmt.Else().Block(missing)
		}
		body = append(body, stmt)
	}
	return append(body, jen.Id("e").Dot("ObjectEnd").Call(), jen.Return(jen.Nil()))
}

// nonEmpty is the condition under which an omitempty member is written; nil
// when only writing tells.
func nonEmpty(test emptyTest, value jen.Code) jen.Code {
	switch test {
	case emptyString:
		return jen.Add(value).Op("!=").Lit("")
	case emptyLen:
		return jen.Len(value).Op(">").Lit(0)
	case emptyPtrString:
		return jen.Add(value).Op("!=").Nil().Op("&&").Op("*").Add(value).Op("!=").Lit("")
	case emptyPointer:
		return jen.Add(value).Op("!=").Nil()
	}
	return nil
}

// nonZero is the condition under which an omitzero member is written.
func nonZero(m memberPlan, value jen.Code) jen.Code {
	switch m.zero {
	case zeroIsZero:
		return jen.Op("!").Add(value).Dot("IsZero").Call()
	case zeroNil:
		return jen.Add(value).Op("!=").Nil()
	case zeroString:
		return jen.Add(value).Op("!=").Lit("")
	case zeroBool:
		return jen.Add(value)
	case zeroNumber:
		return jen.Add(value).Op("!=").Lit(0)
	}
	return jen.Add(value).Op("!=").Parens(jen.Add(m.zeroType).Values())
}
