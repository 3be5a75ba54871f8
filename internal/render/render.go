// Package render is keelgen's last stage: from the model and the schemas it
// writes, with jennifer, the Go file of the compiled whitelist and the
// schema files. It is pure: it returns files and writes nothing.
package render

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/internal/gocode"
	"github.com/keelgen/keel/internal/model"
	"github.com/keelgen/keel/runtime"
)

// Header is the first line of every Go file keelgen writes.
const Header = gocode.Header

// GoFileName is the one Go file keelgen writes.
const GoFileName = "keel_tools.go"

// LockFileName and SignatureFileName name the lock and its detached
// signature in the output directory.
const (
	LockFileName      = runtime.LockFileName
	SignatureFileName = runtime.SignatureFileName
)

// SchemaDir holds the schema files, relative to the output directory.
const SchemaDir = "schemas"

const runtimePkg = "github.com/keelgen/keel/runtime"

// File is one output file, with a slash-separated path relative to the
// output directory.
type File struct {
	Path    string
	Content []byte
}

// InputSchemaFile and OutputSchemaFile name a tool's schema files.
func InputSchemaFile(tool string) string  { return SchemaDir + "/" + tool + ".input.json" }
func OutputSchemaFile(tool string) string { return SchemaDir + "/" + tool + ".output.json" }

// Files renders the output package outPkg for pkg, with its lock file and
// set digest. Tools are already sorted by name, so the output is
// deterministic.
func Files(pkg *model.Package, outPkg string, schemas map[string]model.Schemas, lockFile []byte, setDigest string) ([]File, error) {
	f := jen.NewFile(outPkg)
	f.HeaderComment(Header)
	f.PackageComment(lineText(fmt.Sprintf("Package %s is the compiled whitelist of tools from %s:\n"+
		"the only tools a model can see and call. keelgen writes it; review it in diffs.", outPkg, pkg.Path)))
	f.Comment("The runtime must be at least as new as the generator that wrote this file.")
	f.Const().Id("_").Op("=").Qual(runtimePkg, "IsAtLeastVersion0_2_0")

	f.Add(lineComment("SetDigest identifies this exact tool set: the set_digest of keel.lock.json.\n" +
		"The executor recomputes it from the embedded contracts before it accepts a call."))
	f.Const().Id("SetDigest").Op("=").Lit(setDigest)

	f.Add(lineComment("Tool names. Harness code that names a tool by its constant stops compiling\nwhen the tool is removed."))
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, t := range pkg.Tools {
			g.Id("Tool" + t.Ident()).String().Op("=").Lit(t.Name)
		}
	})

	f.Add(lineComment("Handler signatures as generated. A changed handler fails to compile here;\nrun go generate and review the diff."))
	f.Var().DefsFunc(func(g *jen.Group) {
		for _, t := range pkg.Tools {
			g.Id("_").Add(handlerFuncType(t)).Op("=").Qual(pkg.Path, t.Func)
		}
	})

	for _, t := range pkg.Tools {
		if t.Form == model.PlainParams {
			f.Add(gocode.ArgsStruct(t))
		}
	}

	for _, t := range pkg.Tools {
		if _, ok := schemas[t.Name]; !ok {
			return nil, fmt.Errorf("no schema for tool %s", t.Name)
		}
		f.Comment("//go:embed " + InputSchemaFile(t.Name))
		f.Var().Id(schemaVar(t, "Input")).Index().Byte()
		f.Comment("//go:embed " + OutputSchemaFile(t.Name))
		f.Var().Id(schemaVar(t, "Output")).Index().Byte()
	}

	for _, t := range pkg.Tools {
		f.Commentf("%s binds %s %s (effect %s) to %s.%s.", toolVar(t), t.Name, t.Version, t.Effect, pkg.Name, t.Func)
		info := jen.Dict{
			jen.Id("Name"):         jen.Id("Tool" + t.Ident()),
			jen.Id("Version"):      jen.Lit(t.Version),
			jen.Id("Effect"):       effectCode(t.Effect),
			jen.Id("Description"):  jen.Lit(t.Description),
			jen.Id("InputSchema"):  jen.Id(schemaVar(t, "Input")),
			jen.Id("OutputSchema"): jen.Id(schemaVar(t, "Output")),
		}
		if t.Timeout > 0 {
			info[jen.Id("Timeout")] = durationCode(t.Timeout)
		}
		if len(t.Errors) > 0 {
			info[jen.Id("Errors")] = errorCodes(t)
		}
		f.Var().Id(toolVar(t)).Op("=").Qual(runtimePkg, "NewTool").Call(
			jen.Qual(runtimePkg, "ToolInfo").Values(info),
			handlerBinding(pkg, t),
		)
	}

	f.Add(lineComment("ToolSet is what the executor holds: the tools a model can call, selected\nby exact name with a static switch."))
	f.Var().Id("ToolSet").Qual(runtimePkg, "ToolSet").Op("=").Id("toolSet").Values()
	f.Type().Id("toolSet").Struct()

	f.Add(lineComment("Lookup returns the tool named exactly name, or nil. There is no other way\nfrom a name to a handler."))
	f.Func().Params(jen.Id("toolSet")).Id("Lookup").Params(jen.Id("name").String()).Op("*").Qual(runtimePkg, "Tool").Block(
		jen.Switch(jen.Id("name")).BlockFunc(func(g *jen.Group) {
			for _, t := range pkg.Tools {
				g.Case(jen.Id("Tool" + t.Ident())).Block(jen.Return(jen.Id(toolVar(t))))
			}
			g.Default().Block(jen.Return(jen.Nil()))
		}),
	)

	f.Add(lineComment("lockFS holds keel.lock.json and, once keelgen -sign has signed it,\nkeel.lock.json.sig."))
	f.Comment("//go:embed keel.lock*")
	f.Var().Id("lockFS").Qual("embed", "FS")

	f.Comment("Lock returns the embedded lock and its signature (nil when unsigned).")
	f.Func().Params(jen.Id("toolSet")).Id("Lock").Params().Params(jen.Id("lock"), jen.Id("signature").Index().Byte()).Block(
		jen.List(jen.Id("lock"), jen.Id("_")).Op("=").Id("lockFS").Dot("ReadFile").Call(jen.Lit(LockFileName)),
		jen.List(jen.Id("signature"), jen.Id("_")).Op("=").Id("lockFS").Dot("ReadFile").Call(jen.Lit(SignatureFileName)),
		jen.Return(jen.Id("lock"), jen.Id("signature")),
	)

	f.Comment("Tools returns every tool, sorted by name.")
	f.Func().Params(jen.Id("toolSet")).Id("Tools").Params().Index().Op("*").Qual(runtimePkg, "Tool").Block(
		jen.Return(jen.Index().Op("*").Qual(runtimePkg, "Tool").ValuesFunc(func(g *jen.Group) {
			for _, t := range pkg.Tools {
				g.Id(toolVar(t))
			}
		})),
	)

	f.Add(lineComment("ModelTools is what the model sees: each tool's name, description and\nparameters schema, sorted by name."))
	f.Func().Id("ModelTools").Params().Index().Qual(runtimePkg, "ModelTool").Block(
		jen.Return(jen.Index().Qual(runtimePkg, "ModelTool").ValuesFunc(func(g *jen.Group) {
			for _, t := range pkg.Tools {
				m := jen.Dict{
					jen.Id("Name"):        jen.Id("Tool" + t.Ident()),
					jen.Id("Description"): jen.Lit(t.Description),
					jen.Id("Parameters"):  jen.Id(schemaVar(t, "Input")),
				}
				if len(t.Errors) > 0 {
					m[jen.Id("ErrorCodes")] = errorCodes(t)
				}
				g.Values(m)
			}
		})),
	)

	f.Comment("NewExecutor returns an executor for ToolSet.")
	f.Func().Id("NewExecutor").Params(jen.Id("opts").Op("...").Qual(runtimePkg, "Option")).
		Params(jen.Op("*").Qual(runtimePkg, "Executor"), jen.Error()).Block(
		jen.Return(jen.Qual(runtimePkg, "NewExecutor").Call(jen.Id("ToolSet"), jen.Id("opts").Op("..."))),
	)

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", GoFileName, err)
	}
	files := []File{{Path: GoFileName, Content: buf.Bytes()}, {Path: LockFileName, Content: lockFile}}
	for _, t := range pkg.Tools {
		s := schemas[t.Name]
		files = append(files,
			File{Path: InputSchemaFile(t.Name), Content: s.Input},
			File{Path: OutputSchemaFile(t.Name), Content: s.Output})
	}
	return files, nil
}

func toolVar(t *model.Tool) string              { return "tool" + t.Ident() }
func schemaVar(t *model.Tool, io string) string { return "schema" + t.Ident() + io }

// errorCodes renders a tool's declared business error codes.
func errorCodes(t *model.Tool) jen.Code {
	return jen.Index().Qual(runtimePkg, "Code").ValuesFunc(func(g *jen.Group) {
		for _, c := range t.Errors {
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

// handlerFuncType is the handler's signature as the model describes it.
func handlerFuncType(t *model.Tool) jen.Code {
	params := []jen.Code{jen.Qual("context", "Context")}
	if t.Form == model.StructArgs {
		params = append(params, gocode.TypeCode(t.Args))
	} else {
		for _, p := range t.Params {
			params = append(params, gocode.TypeCode(p.Type))
		}
	}
	return jen.Func().Params(params...).Params(gocode.TypeCode(t.Result), jen.Error())
}

// handlerBinding calls the handler directly, by name, with its concrete types.
func handlerBinding(pkg *model.Package, t *model.Tool) jen.Code {
	if t.Form == model.StructArgs {
		return jen.Qual(runtimePkg, "Handle").Call(jen.Qual(pkg.Path, t.Func))
	}
	args := []jen.Code{jen.Id("ctx")}
	for _, p := range t.Params {
		args = append(args, jen.Id("args").Dot(p.Field))
	}
	return jen.Qual(runtimePkg, "Handle").Call(
		jen.Func().Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("args").Id(t.ArgsTypeName())).
			Params(gocode.TypeCode(t.Result), jen.Error()).Block(
			jen.Return(jen.Qual(pkg.Path, t.Func).Call(args...)),
		),
	)
}

// lineText turns text into // comment lines; jennifer would otherwise render
// a multi-line comment as /* */.
func lineText(text string) string {
	return "// " + strings.ReplaceAll(text, "\n", "\n// ")
}

func lineComment(text string) jen.Code { return jen.Comment(lineText(text)) }
