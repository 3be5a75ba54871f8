package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/runtime"
)

// emitTools prints keel_tools.go from its plan, one section at a time, in
// the order a reviewer reads it; each section is one function below.
func emitTools(p *toolsPlan) ([]byte, error) {
	f := jen.NewFile(p.outPkg)
	useImports(f, p.imports)
	emitHeader(f, p)
	emitSetDigest(f, p.setDigest)
	emitNameConsts(f, p.rows)
	emitSignatureChecks(f, p.rows)
	emitArgsStructs(f, p.argsStructs)
	emitSchemaVars(f, p.rows)
	emitToolSpecs(f, p)
	emitToolSet(f, p)
	emitEntryPoints(f)
	return printFile(f, files.GoFileName)
}

// useImports gives jennifer the planned name of every imported package.
func useImports(f *jen.File, imports []importName) {
	for _, im := range imports {
		if im.alias {
			f.ImportAlias(im.path, im.name)
		} else {
			f.ImportName(im.path, im.name)
		}
	}
}

func emitHeader(f *jen.File, p *toolsPlan) {
	f.HeaderComment(files.Header)
	f.PackageComment(lineText(fmt.Sprintf("Package %s is the compiled whitelist of tools from %s:\n"+
		"the only tools a model can see and call. keelgen writes it; review it in diffs.", p.outPkg, strings.Join(p.paths, ", "))))
	f.Comment("The runtime must be at least as new as the generator that wrote this file.")
	f.Const().Id("_").Op("=").Qual(runtimePkg, handshake)
}

func emitSetDigest(f *jen.File, setDigest string) {
	f.Add(lineComment("SetDigest identifies this exact tool set: the set_digest of keel.lock.json.\n" +
		"The executor recomputes it from the embedded contracts before it accepts a call."))
	f.Const().Id("SetDigest").Op("=").Lit(setDigest)
}

func emitNameConsts(f *jen.File, rows []toolRow) {
	f.Add(lineComment("Tool names. Harness code that names a tool by its constant stops compiling\nwhen the tool is removed."))
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, r := range rows {
			g.Id(r.konst).Op("=").Lit(r.tool.Name)
		}
	})
}

func emitSignatureChecks(f *jen.File, rows []toolRow) {
	f.Add(lineComment("Handler signatures as generated. A changed handler fails to compile here;\nrun go generate and review the diff."))
	f.Var().DefsFunc(func(g *jen.Group) {
		for _, r := range rows {
			g.Id("_").Add(r.handlerType).Op("=").Qual(r.tool.PkgPath, r.tool.Func)
		}
	})
}

func emitArgsStructs(f *jen.File, structs []jen.Code) {
	for _, c := range structs {
		f.Add(c)
	}
}

func emitSchemaVars(f *jen.File, rows []toolRow) {
	f.Comment("schemaFS holds every tool's input and output schema.")
	f.Comment("")
	for _, r := range rows {
		f.Comment("//go:embed " + files.InputSchemaFile(r.tool.Name))
		f.Comment("//go:embed " + files.OutputSchemaFile(r.tool.Name))
	}
	f.Var().Id("schemaFS").Qual("embed", "FS")
}

// emitToolSpecs binds each contract to its handler, fields in reading
// order, in a table the compiler lays out as data (no code runs per tool
// at start but NewTools' loop).
func emitToolSpecs(f *jen.File, p *toolsPlan) {
	f.Add(lineComment("toolSpecs are the tools: each contract in reading order, bound to its handler\n" +
		"by name with its concrete types. The schemas come from schemaFS."))
	f.Var().Id("toolSpecs").Op("=").Index(jen.Op("...")).Qual(runtimePkg, "ToolSpec").CustomFunc(multiLine, func(list *jen.Group) {
		for _, r := range p.rows {
			t := r.tool
			info := jen.Qual(runtimePkg, "ToolInfo").CustomFunc(multiLine, func(g *jen.Group) {
				g.Id("Name").Op(":").Id(r.konst)
				g.Id("Version").Op(":").Lit(t.Version)
				g.Id("Effect").Op(":").Add(effectCode(t.Effect))
				g.Id("Description").Op(":").Lit(t.Description)
				if t.Timeout > 0 {
					g.Id("Timeout").Op(":").Add(durationCode(t.Timeout))
				}
				if len(t.Errors) > 0 {
					g.Id("Errors").Op(":").Add(errorCodes(t.Errors))
				}
				if t.Title != "" {
					g.Id("Title").Op(":").Lit(t.Title)
				}
				if t.Approve != "" {
					g.Id("Approve").Op(":").Lit(t.Approve)
				}
				if len(r.hints) > 0 {
					g.Id("Hints").Op(":").Add(hintsCode(r.hints))
				}
				if t.Deferred {
					g.Id("Deferred").Op(":").True()
					g.Id("Namespace").Op(":").Lit(t.Namespace)
				}
				if len(t.Content) > 0 {
					g.Id("Content").Op(":").Add(stringList(t.Content))
				}
				if len(t.Scopes) > 0 {
					g.Id("Scopes").Op(":").Add(stringList(t.Scopes))
				}
				if len(t.Groups) > 0 {
					g.Id("Groups").Op(":").Add(stringList(t.Groups))
				}
				if t.LaxNumbers {
					g.Id("LaxNumbers").Op(":").True()
				}
				if t.OwnText {
					g.Id("OwnText").Op(":").True()
				}
				if t.NoTextCopy {
					g.Id("NoTextCopy").Op(":").True()
				}
				if len(t.Icons) > 0 {
					g.Id("Icons").Op(":").Add(iconsCode(t.Icons))
				}
				if len(t.Meta) > 0 {
					g.Id("Meta").Op(":").Add(metaCode(t.Meta))
				}
			})
			list.Custom(multiLine, jen.Id("Info").Op(":").Add(info), jen.Id("Handler").Op(":").Add(r.binding))
		}
	})
	if p.stated {
		f.Comment("stated are the values the directives state hints with.")
		f.Var().Id("stated").Op("=").Index(jen.Lit(2)).Bool().Values(jen.False(), jen.True())
	}
	f.Comment("tools are toolSpecs as the executor holds them.")
	f.Var().Id("tools").Op("=").Qual(runtimePkg, "NewTools").Call(jen.Id("schemaFS"), jen.Id("toolSpecs").Index(jen.Op(":")))
}

var multiLine = jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}

func hintsCode(hints []hintField) jen.Code {
	fields := make([]jen.Code, len(hints))
	for i, h := range hints {
		fields[i] = jen.Id(h.field).Op(":").Op("&").Id("stated").Index(jen.Lit(h.stated))
	}
	return jen.Qual(runtimePkg, "Hints").Values(fields...)
}

// stringList is a []string literal.
func stringList(l []string) jen.Code {
	items := make([]jen.Code, len(l))
	for i, s := range l {
		items[i] = jen.Lit(s)
	}
	return jen.Index().String().Values(items...)
}

// emitToolSet is the executor's view: the static switch, the list, the
// lock. After the switch, which depends on the names, it prints the same
// for every set:
//
//	// Tools returns every tool, sorted by name, in a slice of the caller's own.
//	func (toolSet) Tools() []*runtime.Tool {
//		return slices.Clone(tools)
//	}
//
//	// lockFS holds keel.lock.json and, once keelgen -sign has signed it,
//	// keel.lock.json.sig.
//	//
//	//go:embed keel.lock*
//	var lockFS embed.FS
//
//	// Lock returns the embedded lock and its signature (nil when unsigned).
//	func (toolSet) Lock() (lock, signature []byte) {
//		return wire.EmbeddedLock(lockFS)
//	}
func emitToolSet(f *jen.File, p *toolsPlan) {
	f.Add(lineComment("ToolSet is what the executor holds: the tools a model can call, selected\nby exact name with a static switch. It is a function, so no code can swap the set."))
	f.Func().Id("ToolSet").Params().Qual(runtimePkg, "ToolSet").Block(jen.Return(jen.Id("toolSet").Values()))
	f.Type().Id("toolSet").Struct()

	if p.lookup.flat {
		f.Add(lineComment("Lookup returns the tool named exactly name, or nil. There is no other way\nfrom a name to a handler."))
		f.Func().Params(jen.Id("toolSet")).Id("Lookup").Params(jen.Id("name").String()).Op("*").Qual(runtimePkg, "Tool").Block(
			jen.Switch(jen.Id("name")).BlockFunc(func(g *jen.Group) {
				for _, r := range p.rows {
					g.Case(jen.Id(r.konst)).Block(jen.Return(toolRef(r)))
				}
				g.Default().Block(jen.Return(jen.Nil()))
			}),
		)
	} else {
		f.Add(lineComment("Lookup returns the tool named exactly name, or nil. There is no other way\n" +
			"from a name to a handler. It narrows by the name's length and a byte or two\n" +
			"before it compares whole names, so a lookup costs the same among a thousand\n" +
			"tools as among ten; every tool is still reached only by its exact name."))
		f.Func().Params(jen.Id("toolSet")).Id("Lookup").Params(jen.Id("name").String()).Op("*").Qual(runtimePkg, "Tool").Block(
			jen.Switch(jen.Len(jen.Id("name"))).BlockFunc(func(g *jen.Group) {
				for _, c := range p.lookup.byLength {
					g.Case(jen.Lit(c.length)).Add(narrow(c.root))
				}
			}),
			jen.Return(jen.Nil()),
		)
	}

	f.Comment("Tools returns every tool, sorted by name, in a slice of the caller's own.")
	f.Func().Params(jen.Id("toolSet")).Id("Tools").Params().Index().Op("*").Qual(runtimePkg, "Tool").Block(
		jen.Return(jen.Qual("slices", "Clone").Call(jen.Id("tools"))),
	)

	f.Add(lineComment("lockFS holds keel.lock.json and, once keelgen -sign has signed it,\nkeel.lock.json.sig."))
	f.Comment("//go:embed keel.lock*")
	f.Var().Id("lockFS").Qual("embed", "FS")

	f.Comment("Lock returns the embedded lock and its signature (nil when unsigned).")
	f.Func().Params(jen.Id("toolSet")).Id("Lock").Params().Params(jen.Id("lock"), jen.Id("signature").Index().Byte()).Block(
		jen.Return(jen.Qual(wirePkg, "EmbeddedLock").Call(jen.Id("lockFS"))),
	)
}

// narrow prints one step of a narrowed Lookup.
func narrow(n *lookupNode) *jen.Statement {
	if n.pos < 0 {
		return jen.Switch(jen.Id("name")).BlockFunc(func(g *jen.Group) {
			for _, r := range n.rows {
				g.Case(jen.Id(r.konst)).Block(jen.Return(toolRef(r)))
			}
		})
	}
	return jen.Switch(jen.Id("name").Index(jen.Lit(n.pos))).BlockFunc(func(g *jen.Group) {
		for _, b := range slices.Sorted(maps.Keys(n.next)) {
			g.Case(jen.LitRune(rune(b))).Add(narrow(n.next[b]))
		}
	})
}

// toolRef is the tool's entry in tools.
func toolRef(r toolRow) jen.Code {
	return jen.Id("tools").Index(jen.Lit(r.index))
}

// emitEntryPoints are what a harness calls; they print the same for every
// set:
//
//	// ModelTools is what the model sees: each tool's name, description and
//	// parameters schema, sorted by name.
//	func ModelTools() []runtime.ModelTool {
//		return runtime.ModelTools(toolSet{})
//	}
//
//	// NewExecutor returns an executor for ToolSet.
//	func NewExecutor(opts ...runtime.Option) (*runtime.Executor, error) {
//		return runtime.NewExecutor(toolSet{}, opts...)
//	}
func emitEntryPoints(f *jen.File) {
	f.Add(lineComment("ModelTools is what the model sees: each tool's name, description and\nparameters schema, sorted by name."))
	f.Func().Id("ModelTools").Params().Index().Qual(runtimePkg, "ModelTool").Block(
		jen.Return(jen.Qual(runtimePkg, "ModelTools").Call(jen.Id("toolSet").Values())),
	)

	f.Comment("NewExecutor returns an executor for ToolSet.")
	f.Func().Id("NewExecutor").Params(jen.Id("opts").Op("...").Qual(runtimePkg, "Option")).
		Params(jen.Op("*").Qual(runtimePkg, "Executor"), jen.Error()).Block(
		jen.Return(jen.Qual(runtimePkg, "NewExecutor").Call(jen.Id("toolSet").Values(), jen.Id("opts").Op("..."))),
	)
}

// errorCodes prints a tool's declared business error codes.
func errorCodes(codes []string) jen.Code {
	return jen.Index().Qual(runtimePkg, "Code").ValuesFunc(func(g *jen.Group) {
		for _, c := range codes {
			g.Lit(c)
		}
	})
}

// durationCode writes d as N * the largest unit that divides it: 2 *
// time.Second, 1500 * time.Millisecond.
func durationCode(d time.Duration) jen.Code {
	units := []struct {
		name string
		d    time.Duration
	}{{"Hour", time.Hour}, {"Minute", time.Minute}, {"Second", time.Second}, {"Millisecond", time.Millisecond}, {"Microsecond", time.Microsecond}}
	for _, u := range units {
		if d%u.d == 0 {
			return jen.Lit(int(d/u.d)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Lit(int(d)).Op("*").Qual("time", "Nanosecond")
}

func effectCode(effect string) jen.Code {
	if effect == "write" {
		return jen.Qual(runtimePkg, "EffectWrite")
	}
	return jen.Qual(runtimePkg, "EffectRead")
}

// iconsCode is a tool's icons as a []runtime.Icon literal.
func iconsCode(icons []runtime.Icon) jen.Code {
	return jen.Index().Qual(runtimePkg, "Icon").CustomFunc(multiLine, func(g *jen.Group) {
		for _, i := range icons {
			g.CustomFunc(multiLine, func(f *jen.Group) { // fields in the order MCP lists them
				f.Id("Src").Op(":").Lit(i.Src)
				if i.MIMEType != "" {
					f.Id("MIMEType").Op(":").Lit(i.MIMEType)
				}
				if len(i.Sizes) > 0 {
					f.Id("Sizes").Op(":").Add(stringList(i.Sizes))
				}
				if i.Theme != "" {
					f.Id("Theme").Op(":").Lit(i.Theme)
				}
			})
		}
	})
}

// metaCode is a tool's _meta entries as a map literal, its keys sorted.
func metaCode(meta map[string]json.RawMessage) jen.Code {
	return jen.Map(jen.String()).Qual("encoding/json", "RawMessage").CustomFunc(multiLine, func(g *jen.Group) {
		for _, k := range slices.Sorted(maps.Keys(meta)) {
			v := jen.Lit(string(meta[k]))
			if !strings.Contains(string(meta[k]), "`") {
				v = jen.Op("`" + string(meta[k]) + "`")
			}
			g.Lit(k).Op(":").Qual("encoding/json", "RawMessage").Parens(v)
		}
	})
}
