package render

import (
	"go/types"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

// tokenKinds are the JSON token kinds (jsontext.Kind's bytes) a value of
// each kind a union's alternative may be starts with: how the generated
// reader picks the alternative in its one pass.
var tokenKinds = map[kind]string{kString: `"`, kText: `"`, kDuration: `"`, kTime: `"`, kBytes: `"`, kInt: "0", kUint: "0", kFloat: "0", kBool: "tf"}

// unionTypes names the JSON type of a token kind, for diagnostics.
var unionTypes = map[string]string{`"`: "string", "0": "number", "tf": "boolean"}

// unionAlternatives plans a //keel:union struct's alternatives, one per
// pointer field: the reader or writer of the value it points to, checked
// against its alternative of n, and the token kinds that choose it.
func (g *codecs) unionAlternatives(t types.Type, n node, ptr, hint string, write bool) []memberPlan {
	st := types.Unalias(t).Underlying().(*types.Struct)
	if (n.AnyOf == nil && len(n.Type) != st.NumFields()) || (n.AnyOf != nil && len(n.AnyOf) != st.NumFields()) {
		g.fail(ptr, "//keel:union: the schema does not say one alternative per field (did a JSONSchemaExtend method change it?)")
		return nil
	}
	var out []memberPlan
	taken := map[string]string{}
	for i := range st.NumFields() {
		f := st.Field(i)
		p, _ := types.Unalias(f.Type()).(*types.Pointer)
		if p == nil {
			g.fail(ptr, "//keel:union: alternative %s is not a pointer", f.Name())
			continue
		}
		k, _ := classify(p.Elem(), g.pkg.TextTypes)
		tokens := tokenKinds[k]
		if tokens == "" {
			g.fail(ptr, "//keel:union: alternative %s is a %s; an alternative is a string, number, boolean or text type, told apart from the others by its JSON type",
				f.Name(), types.TypeString(p.Elem(), qualifier))
			continue
		}
		if other, ok := taken[tokens]; ok {
			g.fail(ptr, "//keel:union: alternatives %s and %s are both a JSON %s, so a value could be either", other, f.Name(), unionTypes[tokens])
			continue
		}
		taken[tokens] = f.Name()
		var alt node
		if n.AnyOf != nil {
			alt = g.node(n.AnyOf[i])
		} else {
			alt = &schemamodel.Schema{Type: schemamodel.Types{n.Type[i]}}
		}
		fn := g.codec(write, p.Elem(), alt, ptr, hint+f.Name())
		out = append(out, memberPlan{json: tokens, access: []string{f.Name()}, fn: fn, elemType: typeCode(p.Elem())})
	}
	return out
}

func (g *codecs) readUnion(f *codecFunc, t types.Type, n node, ptr, hint string) {
	f.members = g.unionAlternatives(t, n, ptr, hint, false)
}

func (g *codecs) writeUnion(f *codecFunc, t types.Type, n node, ptr, hint string) {
	f.members = g.unionAlternatives(t, n, ptr, hint, true)
}

// emitReadUnion reads the alternative the next token's kind chooses into
// its field; any other kind is the union's type refused.
func emitReadUnion(f *codecFunc) []jen.Code {
	var cases []jen.Code
	for _, m := range f.members {
		var kinds []jen.Code
		for _, c := range m.json {
			kinds = append(kinds, jen.LitRune(c))
		}
		field := jen.Id("x").Dot(m.access[0])
		cases = append(cases, jen.Case(kinds...).Block(
			jen.Add(field).Op("=").New(m.elemType),
			ifErr(jen.Id(m.fn).Call(jen.Id("d"), field)),
		))
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit("type")))))
	return []jen.Code{
		jen.Var().Id("x").Add(f.typ),
		jen.Switch(jen.Id("d").Dot("Kind").Call()).Block(cases...),
		jen.Op("*").Id("v").Op("=").Id("x"),
		jen.Return(jen.Nil()),
	}
}

// emitWriteUnion writes the one alternative set; none or several is the
// handler's mistake, invalid_tool_output.
func emitWriteUnion(f *codecFunc) []jen.Code {
	var set []jen.Code
	var cases []jen.Code
	for _, m := range f.members {
		field := jen.Id("v").Dot(m.access[0])
		set = append(set, jen.Add(field).Op("!=").Nil())
		cases = append(cases, jen.Case(jen.Add(field).Op("!=").Nil()).Block(jen.Return(jen.Id(m.fn).Call(jen.Id("e"), field))))
	}
	names := make([]string, len(f.members))
	for i, m := range f.members {
		names[i] = m.access[0]
	}
	return []jen.Code{
		jen.If(jen.Qual(wirePkg, "Count").Call(set...).Op("!=").Lit(1)).Block(
			jen.Return(jen.Qual(wirePkg, "Failf").Call(jen.Lit("type"), jen.Lit("a union sets exactly one of "+strings.Join(names, ", "))))),
		jen.Switch().Block(cases...),
		jen.Return(jen.Nil()),
	}
}

// isUnion reports a //keel:union struct of pkg.
func isUnion(pkg *model.Package, t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && pkg.IsUnion(n)
}
