package render

import (
	"go/types"
	"maps"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/internal/gocode"
	"github.com/keelgen/keel/internal/model"
)

// reader returns the function that reads a value of type t (nil: the
// tool's emitted argument struct) checked against n.
func (g *codecs) reader(t types.Type, n node, ptr, hint string) string {
	k, ok := g.kindOf(t, n, ptr)
	if !ok {
		return "readUnsupported"
	}
	return g.fn(key("read", t, n)+"|"+g.argsKey(t), "read", hintFor(t, n), hint, func(name string) jen.Code {
		hint := strings.TrimPrefix(name, "read") // what it holds is named after this function
		var body []jen.Code
		switch k {
		case kStruct:
			body = g.readStruct(t, n, ptr, hint)
		case kPointer:
			body = g.readPointer(t, n, ptr, hint)
		case kSlice:
			body = g.readSlice(t, n, ptr, hint)
		case kMap:
			body = g.readMap(t, n, ptr, hint)
		default:
			body = g.readLeaf(t, k, n, ptr, hint)
		}
		return jen.Func().Id(name).Params(jen.Id("d").Op("*").Qual(wirePkg, "Decoder"), jen.Id("v").Op("*").Add(typeCode(t, g.tool))).
			Error().Block(body...).Line()
	})
}

// argsKey tells emitted argument structs apart; two that are one type (an
// alias) share a reader.
func (g *codecs) argsKey(t types.Type) string {
	if t == nil {
		return gocode.ArgsKey(g.tool)
	}
	return ""
}

func (g *codecs) readLeaf(t types.Type, k kind, n node, ptr, hint string) []jen.Code {
	conv := func(x jen.Code) jen.Code { return jen.Op("*").Id("v").Op("=").Add(convert(t, x, g.tool)) }
	var body []jen.Code
	switch k {
	case kString:
		body = append(body, jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("String").Call(), errReturn())
		body = append(body, emitStringChecks(g.stringChecks(n, ptr, hint), jen.Id("s"))...)
		body = append(body, conv(jen.Id("s")))
	case kBool:
		body = append(body, jen.List(jen.Id("b"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Bool").Call(), errReturn())
		body = append(body, emitBoolChecks(boolChecks(n), jen.Id("b"))...)
		body = append(body, conv(jen.Id("b")))
	case kInt, kUint:
		method := map[kind]string{kInt: "Int", kUint: "Uint"}[k]
		size := jen.Lit(bits(t))
		if b := t.Underlying().(*types.Basic); b.Kind() == types.Int || b.Kind() == types.Uint {
			size = jen.Qual("strconv", "IntSize")
		}
		body = append(body, jen.List(jen.Id("n"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot(method).Call(size), errReturn(),
			jen.Id("x").Op(":=").Add(convert(t, jen.Id("n"), g.tool)))
		body = append(body, emitIntChecks(intChecks(n, t, k), jen.Id("x"))...)
		body = append(body, jen.Op("*").Id("v").Op("=").Id("x"))
	case kFloat:
		b := bits(t)
		body = append(body, jen.List(jen.Id("f"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Float").Call(jen.Lit(b)), errReturn())
		body = append(body, emitFloatChecks(g.floatChecks(n, b, ptr), jen.Id("f"), jen.Id("d").Dot("Literal").Call())...)
		body = append(body, conv(jen.Id("f")))
	case kDuration:
		body = append(body, jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("String").Call(), errReturn())
		body = append(body, emitStringChecks(g.stringChecks(n, ptr, hint), jen.Id("s"))...)
		body = append(body,
			jen.List(jen.Id("x"), jen.Err()).Op(":=").Qual("time", "ParseDuration").Call(jen.Id("s")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("range")))), // the syntax passed: out of range
			jen.Op("*").Id("v").Op("=").Id("x"))
	case kBytes:
		// Base64 text (RFC 4648, padded), as json v2 writes it; length
		// keywords count the text, not the bytes.
		body = append(body, jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("String").Call(), errReturn())
		body = append(body, emitStringChecks(g.stringChecks(n, ptr, hint), jen.Id("s"))...)
		body = append(body,
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Qual("encoding/base64", "StdEncoding").Dot("DecodeString").Call(jen.Id("s")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("contentEncoding")))),
			jen.Op("*").Id("v").Op("=").Id("b"))
	case kText:
		// The schema's string keywords first, then the type's own reading:
		// what it refuses is a format failure, its error's text never shown.
		body = append(body, jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("String").Call(), errReturn())
		body = append(body, emitStringChecks(g.stringChecks(n, ptr, hint), jen.Id("s"))...)
		body = append(body, jen.If(jen.Err().Op(":=").Id("v").Dot("UnmarshalText").Call(jen.Index().Byte().Parens(jen.Id("s"))), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("format")))))
	case kTime:
		g.onlyKeywords(n, ptr, "date-time", "type", "format")
		body = append(body, jen.List(jen.Id("t"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Time").Call(), errReturn(),
			jen.Op("*").Id("v").Op("=").Id("t"))
	case kRaw:
		g.onlyKeywords(n, ptr, "", "")
		body = append(body, jen.List(jen.Id("raw"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Raw").Call(), errReturn(),
			jen.Op("*").Id("v").Op("=").Id("raw"))
	}
	return append(body, jen.Return(jen.Nil()))
}

// onlyKeywords refuses keywords other than allowed on a value whose JSON
// form a library type decides (time.Time, json.RawMessage).
func (g *codecs) onlyKeywords(n node, ptr, format string, allowed ...string) {
	for k := range n {
		if annotations[k] {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			g.fail(ptr, "keyword %q on this value cannot be checked by generated code", k)
		}
	}
	if f, ok := n["format"].(string); ok && f != format {
		g.fail(ptr, "format %q does not describe this value (it is %s)", f, format)
	}
}

// readStruct reads an object into a struct: each member once (the reader,
// not jsontext, tracks names: escapes are undone before the comparison),
// no unknown member, every required member present.
func (g *codecs) readStruct(t types.Type, n node, ptr, hint string) []jen.Code {
	fields, nodes, required := g.members(t, n, ptr)
	body := []jen.Code{ifErr(jen.Id("d").Dot("ObjectStart").Call())}
	// One presence flag per member, named after its field: a member added
	// or removed changes its own lines only.
	flags := seenFlags(fields)
	if len(fields) > 0 {
		var decl []jen.Code
		for _, f := range flags {
			decl = append(decl, jen.Id(f).Bool())
		}
		body = append(body, jen.Var().Id("seen").Struct(decl...))
	}
	cases := []jen.Code{}
	for i, f := range fields {
		sub := ptrTo(ptr, f.json)
		var read string
		g.atField(f, func() { read = g.reader(f.typ, nodes[i], sub, hint+fieldHint(f)) })
		member := []jen.Code{
			jen.If(jen.Id("seen").Dot(flags[i])).Block(jen.Return(jen.Qual(wirePkg, "Duplicate").Call())),
			jen.Id("seen").Dot(flags[i]).Op("=").True(),
		}
		if !required[f.json] && !nullable(nodes[i]) {
			// Models send null for "unset"; for an optional member it
			// means absent (documented in docs/executor.md).
			member = append(member, jen.If(jen.Id("d").Dot("Null").Call()).Block(jen.Continue()))
		}
		member = append(member,
			jen.If(jen.Err().Op(":=").Id(read).Call(jen.Id("d"), jen.Op("&").Add(selector(f.access))), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "At").Call(jen.Err(), jen.Lit(f.json))),
			))
		cases = append(cases, jen.Case(jen.Lit(f.json)).Block(member...))
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
	for i, f := range fields {
		if required[f.json] {
			body = append(body, jen.If(jen.Op("!").Id("seen").Dot(flags[i])).Block(
				jen.Return(jen.Qual(wirePkg, "Missing").Call(jen.Lit(f.json)))))
		}
	}
	return append(body, jen.Return(jen.Nil()))
}

func fieldHint(f field) string { return f.access[len(f.access)-1] }

// seenFlags names the presence flag of each field after its Go field (a
// promoted one after its path), unique within the struct.
func seenFlags(fields []field) []string {
	out := make([]string, len(fields))
	taken := map[string]bool{}
	for i, f := range fields {
		name := strings.Join(f.access, "")
		if taken[name] {
			name = strings.Join(f.access, "_")
		}
		taken[name] = true
		out[i] = name
	}
	return out
}

func selector(access []string) jen.Code {
	s := jen.Id("v")
	for _, a := range access {
		s = s.Dot(a)
	}
	return s
}

func (g *codecs) readPointer(t types.Type, n node, ptr, hint string) []jen.Code {
	elem := types.Unalias(t).Underlying().(*types.Pointer).Elem()
	read := g.reader(elem, withoutNull(n), ptr, hint)
	var body []jen.Code
	if nullable(n) {
		body = append(body, jen.If(jen.Id("d").Dot("Null").Call()).Block(jen.Op("*").Id("v").Op("=").Nil(), jen.Return(jen.Nil())))
	}
	return append(body,
		jen.Id("x").Op(":=").New(typeCode(elem, g.tool)),
		ifErr(jen.Id(read).Call(jen.Id("d"), jen.Id("x"))),
		jen.Op("*").Id("v").Op("=").Id("x"),
		jen.Return(jen.Nil()),
	)
}

// withoutNull is n for the value behind a pointer: null is the pointer's.
func withoutNull(n node) node {
	set, all := typeSet(n)
	if all || !set["null"] {
		return n
	}
	out := maps.Clone(n)
	var rest []any
	for _, s := range slices.Sorted(maps.Keys(set)) {
		if s != "null" {
			rest = append(rest, s)
		}
	}
	switch len(rest) {
	case 0:
		delete(out, "type")
	case 1:
		out["type"] = rest[0]
	default:
		out["type"] = rest
	}
	return out
}

// checkContainer reports a schema type that does not describe a slice or
// map (null aside, which nil holds).
func (g *codecs) checkContainer(n node, k kind, t types.Type, ptr string) {
	g.checkType(withoutNull(n), k, t, ptr)
}

func (g *codecs) readSlice(t types.Type, n node, ptr, hint string) []jen.Code {
	g.checkContainer(n, kSlice, t, ptr)
	elem := types.Unalias(t).Underlying().(*types.Slice).Elem()
	read := g.reader(elem, g.itemsNode(n, ptr), ptr+"/0", hint+"Item")
	var body []jen.Code
	if nullable(n) {
		body = append(body, jen.If(jen.Id("d").Dot("Null").Call()).Block(jen.Op("*").Id("v").Op("=").Nil(), jen.Return(jen.Nil())))
	}
	body = append(body,
		ifErr(jen.Id("d").Dot("ArrayStart").Call()),
		jen.Id("s").Op(":=").Make(typeCode(t, g.tool), jen.Lit(0)),
		jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("d").Dot("More").Call(), jen.Id("i").Op("++")).Block(
			jen.Var().Id("x").Add(typeCode(elem, g.tool)),
			jen.If(jen.Err().Op(":=").Id(read).Call(jen.Id("d"), jen.Op("&").Id("x")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtIndex").Call(jen.Err(), jen.Id("i"))),
			),
			jen.Id("s").Op("=").Append(jen.Id("s"), jen.Id("x")),
		),
		ifErr(jen.Id("d").Dot("End").Call()),
	)
	body = append(body, emitCountChecks(countChecks(n, "minItems", "maxItems"), jen.Len(jen.Id("s")))...)
	body = append(body, emitUnique(g.uniqueCheck(n, elem, ptr), jen.Id("s"))...)
	return append(body, jen.Op("*").Id("v").Op("=").Id("s"), jen.Return(jen.Nil()))
}

func (g *codecs) readMap(t types.Type, n node, ptr, hint string) []jen.Code {
	g.checkContainer(n, kMap, t, ptr)
	for _, k := range []string{"properties", "required"} {
		if _, ok := n[k]; ok {
			g.fail(ptr, "keyword %q on a map cannot be checked by generated code; use a struct", k)
		}
	}
	m := types.Unalias(t).Underlying().(*types.Map)
	read := g.reader(m.Elem(), g.valuesNode(n, ptr), ptr+"/*", hint+"Value")
	var body []jen.Code
	if nullable(n) {
		body = append(body, jen.If(jen.Id("d").Dot("Null").Call()).Block(jen.Op("*").Id("v").Op("=").Nil(), jen.Return(jen.Nil())))
	}
	body = append(body,
		ifErr(jen.Id("d").Dot("ObjectStart").Call()),
		jen.Id("m").Op(":=").Add(typeCode(t, g.tool)).Values(),
		jen.For(jen.Id("d").Dot("More").Call()).Block(
			jen.List(jen.Id("k"), jen.Err()).Op(":=").Add(jen.Id("d")).Dot("Key").Call(),
			errReturn(),
			jen.If(jen.List(jen.Id("_"), jen.Id("dup")).Op(":=").Id("m").Index(convert(m.Key(), jen.Id("k"), g.tool)), jen.Id("dup")).Block(
				jen.Return(jen.Qual(wirePkg, "Duplicate").Call()),
			),
			jen.Var().Id("x").Add(typeCode(m.Elem(), g.tool)),
			jen.If(jen.Err().Op(":=").Id(read).Call(jen.Id("d"), jen.Op("&").Id("x")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual(wirePkg, "AtKey").Call(jen.Err())),
			),
			jen.Id("m").Index(convert(m.Key(), jen.Id("k"), g.tool)).Op("=").Id("x"),
		),
		ifErr(jen.Id("d").Dot("End").Call()),
	)
	body = append(body, emitCountChecks(countChecks(n, "minProperties", "maxProperties"), jen.Len(jen.Id("m")))...)
	return append(body, jen.Op("*").Id("v").Op("=").Id("m"), jen.Return(jen.Nil()))
}

// convert is x as a value of t; no conversion where x already is a t (the
// decoder returns string, bool, int64, uint64 and float64, and the encoder
// takes them).
func convert(t types.Type, x jen.Code, tool *model.Tool) jen.Code {
	if b, basic := types.Unalias(t).(*types.Basic); basic {
		switch b.Kind() {
		case types.String, types.Bool, types.Int64, types.Uint64, types.Float64:
			return x
		}
	}
	return jen.Add(typeCode(t, tool)).Parens(x)
}
