package render

import (
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
)

// emitCodecs prints keel_codecs.go from its plan, section by section: the
// shape checks, the call types, the readers and writers, the patterns.
func emitCodecs(p *codecPlan, imports []importName, outPkg string) ([]byte, error) {
	f := jen.NewFile(outPkg)
	useImports(f, imports)
	f.HeaderComment(files.Header)
	emitShapes(f, p.shapes)
	for _, c := range p.calls {
		emitCall(f, c)
	}
	for _, fn := range p.funcs {
		f.Add(emitFunc(fn))
	}
	emitForms(f, p.forms)
	if len(p.patterns) > 0 {
		var defs []jen.Code
		for _, v := range p.patterns {
			defs = append(defs, jen.Id(v.name).Op("=").Qual(wirePkg, "MustPattern").Call(jen.Lit(v.re)))
		}
		f.Comment("Patterns of the schemas, compiled once (Go's RE2 syntax, as the validator has it).")
		f.Var().Defs(defs...)
	}
	return printFile(f, files.CodecFileName)
}

// emitShapes prints one compile-time check per struct type the readers and
// writers fill or read field by field: a conversion to the struct as
// keelgen read it. Struct conversion ignores tags but not field names,
// types, order or embedding, so a field added, removed, renamed or retyped
// without go generate stops go build here. A struct with unexported fields
// cannot be spelled in another package; its check is a keyed literal of its
// exported fields, which a removed, renamed or retyped field breaks.
func emitShapes(f *jen.File, shapes []shapeCheck) {
	if len(shapes) == 0 {
		return
	}
	f.Comment("Struct shapes as keelgen read them. A field added, removed, renamed or retyped")
	f.Comment("since then fails to compile here: run go generate and review the diff.")
	f.Var().DefsFunc(func(g *jen.Group) {
		for _, s := range shapes {
			if s.exact != nil {
				g.Id("_").Op("=").Add(s.exact).Call(jen.Add(s.typ).Values())
				continue
			}
			g.Id("_").Op("=").Add(s.typ).Add(jen.ValuesFunc(func(v *jen.Group) {
				for _, fd := range s.fields {
					v.Id(fd.name).Op(":").Op("*").New(fd.typ)
				}
			}))
		}
	})
}

// emitCall prints the handler type of the tools that share one argument
// reader and one result writer, and the type of their calls: the handler,
// its arguments, read and checked, then its result. For the example's
// lookup_incident it prints (TestEmitterDocsShowTheirOutput holds this to
// the committed output):
//
//	// lookupIncidentArgsHandler is a handler with the reader of its arguments and the writer of its result.
//	type lookupIncidentArgsHandler func(context.Context, example.LookupIncidentArgs) (example.Incident, error)
//
//	// Read reads and checks a call's arguments.
//	func (h lookupIncidentArgsHandler) Read(d *wire.Decoder) (wire.Call, error) {
//		c := &lookupIncidentArgsCall{handler: h}
//		if err := readLookupIncidentArgs(d, &c.args); err != nil {
//			return nil, err
//		}
//		return c, nil
//	}
//
//	// lookupIncidentArgsCall is one call: the handler, its arguments, then its result.
//	type lookupIncidentArgsCall struct {
//		handler lookupIncidentArgsHandler
//		args    example.LookupIncidentArgs
//		result  example.Incident
//	}
//
//	// Arguments is the checked argument value, as the policy judges it.
//	func (c *lookupIncidentArgsCall) Arguments() any {
//		return &c.args
//	}
//
//	// WriteArguments writes the checked argument value as JSON, each member as the reader accepted it: what the policy reads.
//	func (c *lookupIncidentArgsCall) WriteArguments(e *wire.Encoder) error {
//		return writeLookupIncidentArgs(e, &c.args)
//	}
//
//	func (c *lookupIncidentArgsCall) Run(ctx context.Context) (err error) {
//		c.result, err = c.handler(ctx, c.args)
//		return err
//	}
//
//	func (c *lookupIncidentArgsCall) Result(e *wire.Encoder) error {
//		return writeIncident(e, &c.result)
//	}
func emitCall(f *jen.File, c callPlan) {
	for _, code := range []jen.Code{
		jen.Commentf("%s is a handler with the reader of its arguments and the writer of its result.", c.handler),
		jen.Type().Id(c.handler).Add(c.handlerType),
		jen.Line(),
		jen.Comment("Read reads and checks a call's arguments."),
		jen.Func().Params(jen.Id("h").Id(c.handler)).Id("Read").Params(jen.Id("d").Op("*").Qual(wirePkg, "Decoder")).
			Params(jen.Qual(wirePkg, "Call"), jen.Error()).Block(
			jen.Id("c").Op(":=").Op("&").Id(c.call).Values(jen.Dict{jen.Id("handler"): jen.Id("h")}),
			jen.If(jen.Err().Op(":=").Id(c.read).Call(jen.Id("d"), jen.Op("&").Id("c").Dot("args")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Nil(), jen.Err()),
			),
			jen.Return(jen.Id("c"), jen.Nil()),
		),
		jen.Line(),
		jen.Commentf("%s is one call: the handler, its arguments, then its result.", c.call),
		jen.Type().Id(c.call).Struct(
			jen.Id("handler").Id(c.handler),
			jen.Id("args").Add(c.args),
			jen.Id("result").Add(c.result),
		),
		jen.Line(),
		jen.Comment("Arguments is the checked argument value, as the policy judges it."),
		jen.Func().Params(jen.Id("c").Op("*").Id(c.call)).Id("Arguments").Params().Any().Block(
			jen.Return(jen.Op("&").Id("c").Dot("args")),
		),
		jen.Line(),
		jen.Comment("WriteArguments writes the checked argument value as JSON, each member as the reader accepted it: what the policy reads."),
		jen.Func().Params(jen.Id("c").Op("*").Id(c.call)).Id("WriteArguments").Params(jen.Id("e").Op("*").Qual(wirePkg, "Encoder")).
			Error().Block(
			jen.Return(jen.Id(c.writeArgs).Call(jen.Id("e"), jen.Op("&").Id("c").Dot("args"))),
		),
		jen.Line(),
		jen.Func().Params(jen.Id("c").Op("*").Id(c.call)).Id("Run").Params(jen.Id("ctx").Qual("context", "Context")).
			Params(jen.Err().Error()).Block(
			jen.List(jen.Id("c").Dot("result"), jen.Err()).Op("=").Id("c").Dot("handler").Call(jen.Id("ctx"), jen.Id("c").Dot("args")),
			jen.Return(jen.Err()),
		),
		jen.Line(),
		jen.Func().Params(jen.Id("c").Op("*").Id(c.call)).Id("Result").Params(jen.Id("e").Op("*").Qual(wirePkg, "Encoder")).
			Error().Block(
			jen.Return(jen.Id(c.write).Call(jen.Id("e"), jen.Op("&").Add(resultData(c)))),
		),
		jen.Line(),
	} {
		f.Add(code)
	}
	if c.text {
		f.Comment("Text is the result's own text (its MCPText method), which an MCP client's text block carries.")
		f.Func().Params(jen.Id("c").Op("*").Id(c.call)).Id("Text").Params().String().Block(
			jen.Return(jen.Add(resultData(c)).Dot("MCPText").Call()),
		)
		f.Line()
	}
	if c.content {
		f.Comment("Content is the result's content blocks, which the executor checks against the tool's content types.")
		f.Func().Params(jen.Id("c").Op("*").Id(c.call)).Id("Content").Params().Index().Qual(runtimePkg, "Content").Block(
			jen.Return(jen.Id("c").Dot("result").Dot("Content")),
		)
		f.Line()
	}
}

// resultData is what the result writer writes: the result, or the Data of
// a WithContent.
func resultData(c callPlan) jen.Code {
	if c.content {
		return jen.Id("c").Dot("result").Dot("Data")
	}
	return jen.Id("c").Dot("result")
}

// emitForms registers the forms handlers ask a person to fill: each type's
// schema, as the client is shown it, and the reader of the answer.
func emitForms(f *jen.File, forms []formPlan) {
	if len(forms) == 0 {
		return
	}
	f.Comment("The forms handlers ask a person to fill (ask.Elicit): the schema the client shows,")
	f.Comment("and the reader that checks the answer.")
	f.Func().Id("init").Params().BlockFunc(func(g *jen.Group) {
		for _, form := range forms {
			schema := jen.Lit(form.schema)
			if !strings.Contains(form.schema, "`") {
				schema = jen.Op("`" + form.schema + "`")
			}
			g.Qual(askPkg, "RegisterForm").Call(schema, jen.Id(form.read))
		}
	})
}
