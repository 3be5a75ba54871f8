package render

import (
	"github.com/dave/jennifer/jen"
)

// emitFunc prints a reader, func readX(d *wire.Decoder, v *T) error, or a
// writer, func writeX(e *wire.Encoder, v *T) error.
func emitFunc(f *codecFunc) jen.Code {
	bodies, leaf, param := readBodies, emitReadLeaf, jen.Id("d").Op("*").Qual(wirePkg, "Decoder")
	if f.write {
		bodies, leaf, param = writeBodies, emitWriteLeaf, jen.Id("e").Op("*").Qual(wirePkg, "Encoder")
	}
	body, ok := bodies[f.kind]
	if !ok {
		body = leaf
	}
	return jen.Func().Id(f.name).Params(param, jen.Id("v").Op("*").Add(f.typ)).Error().Block(body(f)...).Line()
}

var (
	readBodies  = map[kind]func(*codecFunc) []jen.Code{kStruct: emitReadStruct, kPointer: emitReadPointer, kNullable: emitReadNullable, kSlice: emitReadSlice, kArray: emitReadArray, kTuple: emitReadTuple, kUnion: emitReadUnion, kMap: emitReadMap}
	writeBodies = map[kind]func(*codecFunc) []jen.Code{kStruct: emitWriteStruct, kPointer: emitWritePointer, kNullable: emitWriteNullable, kSlice: emitWriteSlice, kArray: emitWriteArray, kTuple: emitWriteTuple, kUnion: emitWriteUnion, kMap: emitWriteMap}
)

// converted is x as a value of the plan's type.
func converted(conv, x jen.Code) jen.Code {
	if conv == nil {
		return x
	}
	return jen.Add(conv).Parens(x)
}

// emitBound is the bound on a text's bytes before a parser keel does not
// own reads it, when the member's maxLength does not bound it.
func emitBound(f *codecFunc) []jen.Code {
	if f.bound == "" {
		return nil
	}
	return []jen.Code{ifErr(jen.Qual(wirePkg, "Bounded").Call(jen.Id("s"), jen.Qual(wirePkg, f.bound)))}
}

// decodeString is `s, err := d.String()` and its error check.
func decodeString() []jen.Code {
	return []jen.Code{jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("String").Call(), errReturn()}
}

func emitReadLeaf(f *codecFunc) []jen.Code {
	set := func(x jen.Code) jen.Code { return jen.Op("*").Id("v").Op("=").Add(converted(f.conv, x)) }
	var body []jen.Code
	switch f.kind {
	case kString:
		body = append(body, decodeString()...)
		body = append(body, emitStringChecks(f.checks, jen.Id("s"))...)
		body = append(body, set(jen.Id("s")))
	case kBool:
		body = append(body, jen.List(jen.Id("b"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Bool").Call(), errReturn())
		body = append(body, emitBoolChecks(f.checks, jen.Id("b"))...)
		body = append(body, set(jen.Id("b")))
	case kInt, kUint:
		method := map[kind]string{kInt: "Int", kUint: "Uint"}[f.kind]
		size := jen.Lit(f.bits)
		if f.intLen {
			size = jen.Qual("strconv", "IntSize")
		}
		body = append(body, jen.List(jen.Id("n"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot(method).Call(size), errReturn(),
			jen.Id("x").Op(":=").Add(converted(f.conv, jen.Id("n"))))
		body = append(body, emitIntChecks(f.checks, jen.Id("x"))...)
		body = append(body, jen.Op("*").Id("v").Op("=").Id("x"))
	case kFloat:
		body = append(body, jen.List(jen.Id("f"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Float").Call(jen.Lit(f.bits)), errReturn())
		body = append(body, emitFloatChecks(f.checks, jen.Id("f"), jen.Id("d").Dot("Literal").Call())...)
		body = append(body, set(jen.Id("f")))
	case kDuration:
		body = append(body, decodeString()...)
		body = append(body, emitBound(f)...)
		body = append(body, emitStringChecks(f.checks, jen.Id("s"))...)
		body = append(body,
			jen.List(jen.Id("x"), jen.Err()).Op(":=").Qual("time", "ParseDuration").Call(jen.Id("s")),
			jen.If(jen.Err().Op("!=").Nil()).Block(returnWireFail("range")), // the syntax passed: out of range
			jen.Op("*").Id("v").Op("=").Id("x"))
	case kBytes:
		// Base64 text (RFC 4648, padded), as json v2 writes it; length
		// keywords count the text, not the bytes.
		body = append(body, decodeString()...)
		body = append(body, emitStringChecks(f.checks, jen.Id("s"))...)
		body = append(body,
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Qual(wirePkg, "Base64").Call(jen.Id("s")),
			errReturn(),
			jen.Op("*").Id("v").Op("=").Id("b"))
	case kText:
		// The schema's string keywords first, then the type's own reading:
		// what it refuses is a format failure, its error's text never shown.
		body = append(body, decodeString()...)
		body = append(body, emitBound(f)...)
		body = append(body, emitStringChecks(f.checks, jen.Id("s"))...)
		if f.parse != "" {
			body = append(body,
				jen.List(jen.Id("x"), jen.Err()).Op(":=").Qual(wirePkg, f.parse).Call(jen.Id("s")),
				errReturn(),
				jen.Op("*").Id("v").Op("=").Id("x"))
			break
		}
		body = append(body, jen.If(jen.Err().Op(":=").Id("v").Dot("UnmarshalText").Call(jen.Index().Byte().Parens(jen.Id("s"))), jen.Err().Op("!=").Nil()).Block(
			returnWireFail("format")))
	case kTime:
		body = append(body, jen.List(jen.Id("t"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Time").Call(), errReturn(),
			jen.Op("*").Id("v").Op("=").Id("t"))
	case kRaw:
		body = append(body, jen.List(jen.Id("raw"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Raw").Call(), errReturn(),
			jen.Op("*").Id("v").Op("=").Id("raw"))
	}
	return append(body, jen.Return(jen.Nil()))
}

// emitReadStruct reads an object into a struct: each member once (the
// reader, not jsontext, tracks names: escapes are undone before the
// comparison), no unknown member, every required member present.
func emitReadStruct(f *codecFunc) []jen.Code {
	body := []jen.Code{ifErr(jen.Id("d").Dot("ObjectStart").Call())}
	if len(f.members) > 0 {
		var decl []jen.Code
		for _, m := range f.members {
			decl = append(decl, jen.Id(m.flag).Bool())
		}
		body = append(body, jen.Var().Id("seen").Struct(decl...))
	}
	var given []jen.Code
	for _, m := range f.members {
		if m.given {
			given = append(given, jen.Id(m.flag).Bool())
		}
	}
	if len(given) > 0 {
		body = append(body, jen.Var().Id("given").Struct(given...))
	}
	cases := []jen.Code{}
	for _, m := range f.members {
		member := []jen.Code{
			jen.If(jen.Id("seen").Dot(m.flag)).Block(jen.Return(jen.Qual(wirePkg, "Duplicate").Call())),
			jen.Id("seen").Dot(m.flag).Op("=").True(),
		}
		if m.nullAbsent {
			member = append(member, jen.If(jen.Id("d").Dot("Null").Call()).Block(jen.Continue()))
		}
		if m.given {
			member = append(member, jen.Id("given").Dot(m.flag).Op("=").True())
		}
		member = append(member,
			jen.If(jen.Err().Op(":=").Id(m.fn).Call(jen.Id("d"), jen.Op("&").Add(selector(m.access))), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "At").Call(jen.Err(), jen.Lit(m.json))),
			))
		cases = append(cases, jen.Case(jen.Lit(m.json)).Block(member...))
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.Qual(wirePkg, "Unknown").Call())))
	body = append(body,
		jen.For(jen.Id("d").Dot("More").Call()).Block(
			jen.List(jen.Id("name"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Name").Call(),
			errReturn(),
			jen.Switch(jen.String().Parens(jen.Id("name"))).Block(cases...),
		),
		ifErr(jen.Id("d").Dot("End").Call()),
	)
	for _, m := range f.members {
		if m.required {
			body = append(body, jen.If(jen.Op("!").Id("seen").Dot(m.flag)).Block(
				jen.Return(jen.Qual(wirePkg, "Missing").Call(jen.Lit(m.json)))))
		}
	}
	for _, a := range f.alternatives {
		body = append(body, emitAlternatives(a))
	}
	for _, d := range f.dependents {
		var missing *jen.Statement
		for i, need := range d.needs {
			if i > 0 {
				missing = missing.Op("||")
			} else {
				missing = jen.Null()
			}
			missing = missing.Op("!").Id("given").Dot(need)
		}
		if len(d.needs) > 1 {
			missing = jen.Parens(missing)
		}
		body = append(body, jen.If(jen.Id("given").Dot(d.flag).Op("&&").Add(missing)).Block(
			jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("dependentRequired")))))
	}
	return append(body, jen.Return(jen.Nil()))
}

// emitAlternatives fails a oneOf unless exactly one set of members was
// given, an anyOf unless one was.
func emitAlternatives(a alternativesPlan) jen.Code {
	var sets []jen.Code
	for _, set := range a.sets {
		var all *jen.Statement
		for i, flag := range set {
			if i > 0 {
				all = all.Op("&&")
			} else {
				all = jen.Null()
			}
			all = all.Id("given").Dot(flag)
		}
		sets = append(sets, all)
	}
	fail := jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit(a.keyword)))
	if a.keyword == "oneOf" {
		return jen.If(jen.Qual(wirePkg, "Count").Call(sets...).Op("!=").Lit(1)).Block(fail)
	}
	return jen.If(jen.Qual(wirePkg, "Count").Call(sets...).Op("==").Lit(0)).Block(fail)
}

func selector(access []string) jen.Code {
	s := jen.Id("v")
	for _, a := range access {
		s = s.Dot(a)
	}
	return s
}

// readNull is, for a container or pointer that takes null, a null read as nil.
func readNull(f *codecFunc) []jen.Code {
	if !f.null {
		return nil
	}
	return []jen.Code{jen.If(jen.Id("d").Dot("Null").Call()).Block(jen.Op("*").Id("v").Op("=").Nil(), jen.Return(jen.Nil()))}
}

func emitReadPointer(f *codecFunc) []jen.Code {
	return append(readNull(f),
		jen.Id("x").Op(":=").New(f.elemType),
		ifErr(jen.Id(f.elem).Call(jen.Id("d"), jen.Id("x"))),
		jen.Op("*").Id("v").Op("=").Id("x"),
		jen.Return(jen.Nil()),
	)
}

// emitReadNullable reads null, or a value into x: the member's three
// states, absent being the one it never reads.
func emitReadNullable(f *codecFunc) []jen.Code {
	return []jen.Code{
		jen.If(jen.Id("d").Dot("Null").Call()).Block(jen.Op("*").Id("v").Op("=").Qual(wirePkg, "Null").Types(f.elemType).Call(), jen.Return(jen.Nil())),
		jen.Var().Id("x").Add(f.elemType),
		ifErr(jen.Id(f.elem).Call(jen.Id("d"), jen.Op("&").Id("x"))),
		jen.Op("*").Id("v").Op("=").Qual(wirePkg, "Of").Call(jen.Id("x")),
		jen.Return(jen.Nil()),
	}
}

// emitReadTuple reads a tuple's items into its fields, in order: an item
// short is minItems, one more maxItems.
func emitReadTuple(f *codecFunc) []jen.Code {
	body := []jen.Code{ifErr(jen.Id("d").Dot("ArrayStart").Call())}
	for i, m := range f.members {
		body = append(body,
			jen.If(jen.Op("!").Id("d").Dot("More").Call()).Block(jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("minItems")))),
			jen.If(jen.Err().Op(":=").Id(m.fn).Call(jen.Id("d"), jen.Op("&").Add(selector(m.access))), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtIndex").Call(jen.Err(), jen.Lit(i))),
			))
	}
	return append(body,
		jen.If(jen.Id("d").Dot("More").Call()).Block(jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("maxItems")))),
		ifErr(jen.Id("d").Dot("End").Call()),
		jen.Return(jen.Nil()))
}

// emitReadArray reads exactly as many items as the array holds: one more
// is maxItems before it is read, one fewer minItems.
func emitReadArray(f *codecFunc) []jen.Code {
	body := []jen.Code{
		ifErr(jen.Id("d").Dot("ArrayStart").Call()),
		jen.Var().Id("a").Add(f.typ),
		jen.Id("n").Op(":=").Lit(0),
		jen.For(jen.Id("d").Dot("More").Call()).Block(
			jen.If(jen.Id("n").Op("==").Len(jen.Id("a"))).Block(jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("maxItems")))),
			jen.If(jen.Err().Op(":=").Id(f.elem).Call(jen.Id("d"), jen.Op("&").Id("a").Index(jen.Id("n"))), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtIndex").Call(jen.Err(), jen.Id("n"))),
			),
			jen.Id("n").Op("++"),
		),
		ifErr(jen.Id("d").Dot("End").Call()),
		jen.If(jen.Id("n").Op("<").Len(jen.Id("a"))).Block(jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("minItems")))),
	}
	body = append(body, emitUnique(f.unique, jen.Id("a").Index(jen.Op(":")))...)
	return append(body, jen.Op("*").Id("v").Op("=").Id("a"), jen.Return(jen.Nil()))
}

func emitReadSlice(f *codecFunc) []jen.Code {
	body := append(readNull(f),
		ifErr(jen.Id("d").Dot("ArrayStart").Call()),
		jen.Id("s").Op(":=").Make(f.typ, jen.Lit(0)),
		jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("d").Dot("More").Call(), jen.Id("i").Op("++")).Block(
			jen.Var().Id("x").Add(f.elemType),
			jen.If(jen.Err().Op(":=").Id(f.elem).Call(jen.Id("d"), jen.Op("&").Id("x")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtIndex").Call(jen.Err(), jen.Id("i"))),
			),
			jen.Id("s").Op("=").Append(jen.Id("s"), jen.Id("x")),
		),
		ifErr(jen.Id("d").Dot("End").Call()),
	)
	body = append(body, emitCountChecks(f.counts, jen.Len(jen.Id("s")))...)
	body = append(body, emitUnique(f.unique, jen.Id("s"))...)
	return append(body, jen.Op("*").Id("v").Op("=").Id("s"), jen.Return(jen.Nil()))
}

func emitReadMap(f *codecFunc) []jen.Code {
	key := converted(f.keyConv, jen.Id("k"))
	body := append(readNull(f),
		ifErr(jen.Id("d").Dot("ObjectStart").Call()),
		jen.Id("m").Op(":=").Add(f.typ).Values(),
		jen.For(jen.Id("d").Dot("More").Call()).Block(
			jen.List(jen.Id("k"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Key").Call(),
			errReturn(),
			jen.If(jen.List(jen.Id("_"), jen.Id("dup")).Op(":=").Id("m").Index(key), jen.Id("dup")).Block(
				jen.Return(jen.Qual(wirePkg, "Duplicate").Call()),
			),
			jen.Var().Id("x").Add(f.elemType),
			jen.If(jen.Err().Op(":=").Id(f.elem).Call(jen.Id("d"), jen.Op("&").Id("x")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtKey").Call(jen.Err())),
			),
			jen.Id("m").Index(key).Op("=").Id("x"),
		),
		ifErr(jen.Id("d").Dot("End").Call()),
	)
	body = append(body, emitCountChecks(f.counts, jen.Len(jen.Id("m")))...)
	return append(body, jen.Op("*").Id("v").Op("=").Id("m"), jen.Return(jen.Nil()))
}
