// Package render is keelgen's last stage: from the model and the schemas it
// writes, with jennifer, the Go files of the compiled whitelist
// (keel_tools.go, and keel_codecs.go with the readers and writers), the
// schema files and the lock. It is pure: it returns files and writes
// nothing. Files renders keel_tools.go one section at a time, in the order a
// reviewer reads it; each section is one function below. keel_codecs.go is
// planned first (plan*.go, checks.go: every question to go/types, every name,
// every diagnostic) and then printed (emit*.go, checks_emit.go), which cannot
// fail.
package render

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	pathpkg "path"
	"slices"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/imports"

	"github.com/keelgen/keel/internal/files"
	"github.com/keelgen/keel/internal/gocode"
	"github.com/keelgen/keel/internal/model"
	"github.com/keelgen/keel/runtime"
)

const runtimePkg = "github.com/keelgen/keel/runtime"

// handshake is the runtime constant generated code references: a runtime
// older than this generator fails to compile it.
const handshake = "IsAtLeastVersion0_4_0"

// File is one output file (files.File).
type File = files.File

// Files renders the output package outPkg for pkg, with its lock file and
// set digest. Tools are already sorted by name, so the output is
// deterministic. A schema keyword the generated checks cannot express is a
// diagnostic, and then there are no files; with files, the diagnostics
// returned are warnings.
func Files(pkg *model.Package, outPkg string, schemas map[string]model.Schemas, lockFile []byte, setDigest string) ([]File, []model.Diagnostic, error) {
	for _, t := range pkg.Tools {
		if _, ok := schemas[t.Name]; !ok {
			return nil, nil, fmt.Errorf("no schema for tool %s", t.Name)
		}
	}
	codecs, diags, err := codecFile(pkg, outPkg, schemas)
	if err != nil || len(diags) > 0 {
		return nil, diags, err
	}
	f := jen.NewFile(outPkg)
	importNames(f, pkg)
	header(f, pkg, outPkg)
	setDigestConst(f, setDigest)
	nameConsts(f, pkg)
	signatureChecks(f, pkg)
	argsStructs(f, pkg)
	schemaVars(f, pkg)
	toolVars(f, pkg, codecs.binders)
	toolSet(f, pkg)
	entryPoints(f)

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", files.GoFileName, err)
	}
	src, err := groupImports(buf.Bytes())
	if err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", files.GoFileName, err)
	}
	out := []File{{Path: files.GoFileName, Content: src}, {Path: files.CodecFileName, Content: codecs.src}, {Path: files.LockFileName, Content: lockFile}}
	for _, t := range pkg.Tools {
		s := schemas[t.Name]
		out = append(out,
			File{Path: files.InputSchemaFile(t.Name), Content: s.Input},
			File{Path: files.OutputSchemaFile(t.Name), Content: s.Output})
	}
	return out, codecs.warnings, nil
}

// importNames tells jennifer every imported package's name, so it writes no
// alias that merely repeats it. A package of the user's whose name another
// import or an identifier of the generated code also uses (tools/notes/store
// and tools/weather/store; a handler package named tools, runtime, wire or
// context) is named by its parent directory and its name (notesstore,
// intools): stable, readable in review, and chosen from the paths alone, so
// it does not shift when another tool is added.
func importNames(f *jen.File, pkg *model.Package) {
	f.ImportName(runtimePkg, "runtime")
	f.ImportName(wirePkg, "wire")
	names := map[string]string{} // path → name
	add := func(path, name string) { names[path] = name }
	seen := map[types.Type]bool{}
	for _, t := range pkg.Tools {
		add(t.PkgPath, t.PkgName)
		for _, typ := range append([]types.Type{t.Args, t.ResultType()}, paramTypes(t)...) {
			gocode.Packages(typ, seen, add)
		}
	}
	taken := map[string]bool{}
	for _, name := range generatedNames {
		taken[name] = true
	}
	count := map[string]int{}
	for path, name := range names {
		if standard(path) {
			taken[name] = true // the standard library keeps its names
		} else {
			count[name]++
		}
	}
	paths := slices.Sorted(maps.Keys(names))
	var clashing []string
	for _, path := range paths {
		name := names[path]
		if standard(path) || count[name] == 1 && !taken[name] {
			f.ImportName(path, name)
			taken[name] = true
			continue
		}
		clashing = append(clashing, path)
	}
	for _, path := range clashing {
		f.ImportAlias(path, importAlias(path, names[path], taken))
	}
}

// generatedNames are the names the generated files use for packages and
// identifiers of their own (package-level and in function bodies) that a
// user package's name must not take.
var generatedNames = []string{
	"runtime", "wire", "context", "embed", "base64", "maps", "slices", "strconv", "time",
	"tools", "args", "b", "c", "ctx", "d", "dup", "e", "err", "f", "h", "handler", "i", "k", "lit",
	"lock", "m", "n", "name", "opts", "raw", "result", "s", "seen", "signature", "stated", "t", "v", "x",
}

// standard reports whether path is the standard library's (or keel's own
// runtime), whose names the generated code writes as they are.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") || path == runtimePkg || path == wirePkg
}

// importAlias names a clashing package by its path's last elements, as
// few as make a name no other import or identifier has.
func importAlias(path, name string, taken map[string]bool) string {
	letters := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, strings.ToLower(s))
	}
	alias := name
	for dir := pathpkg.Dir(path); ; dir = pathpkg.Dir(dir) {
		if dir == "." || dir == "/" {
			alias += "pkg"
		} else {
			alias = letters(pathpkg.Base(dir)) + alias
		}
		if !taken[alias] && !token.IsKeyword(alias) {
			taken[alias] = true
			return alias
		}
	}
}

func paramTypes(t *model.Tool) []types.Type {
	var out []types.Type
	for _, p := range t.Params {
		out = append(out, p.Type)
	}
	return out
}

func header(f *jen.File, pkg *model.Package, outPkg string) {
	f.HeaderComment(files.Header)
	f.PackageComment(lineText(fmt.Sprintf("Package %s is the compiled whitelist of tools from %s:\n"+
		"the only tools a model can see and call. keelgen writes it; review it in diffs.", outPkg, strings.Join(pkg.Paths, ", "))))
	f.Comment("The runtime must be at least as new as the generator that wrote this file.")
	f.Const().Id("_").Op("=").Qual(runtimePkg, handshake)
}

func setDigestConst(f *jen.File, setDigest string) {
	f.Add(lineComment("SetDigest identifies this exact tool set: the set_digest of keel.lock.json.\n" +
		"The executor recomputes it from the embedded contracts before it accepts a call."))
	f.Const().Id("SetDigest").Op("=").Lit(setDigest)
}

func nameConsts(f *jen.File, pkg *model.Package) {
	f.Add(lineComment("Tool names. Harness code that names a tool by its constant stops compiling\nwhen the tool is removed."))
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, t := range pkg.Tools {
			g.Id(nameConst(t)).Op("=").Lit(t.Name)
		}
	})
}

func signatureChecks(f *jen.File, pkg *model.Package) {
	f.Add(lineComment("Handler signatures as generated. A changed handler fails to compile here;\nrun go generate and review the diff."))
	f.Var().DefsFunc(func(g *jen.Group) {
		for _, t := range pkg.Tools {
			g.Id("_").Add(handlerFuncType(t)).Op("=").Qual(t.PkgPath, t.Func)
		}
	})
}

func argsStructs(f *jen.File, pkg *model.Package) {
	for _, c := range gocode.ArgsStructs(pkg.Tools) {
		f.Add(c)
	}
}

func schemaVars(f *jen.File, pkg *model.Package) {
	f.Comment("schemaFS holds every tool's input and output schema.")
	f.Comment("")
	for _, t := range pkg.Tools {
		f.Comment("//go:embed " + files.InputSchemaFile(t.Name))
		f.Comment("//go:embed " + files.OutputSchemaFile(t.Name))
	}
	f.Var().Id("schemaFS").Qual("embed", "FS")
}

// stringList is a []string literal.
func stringList(l []string) jen.Code {
	items := make([]jen.Code, len(l))
	for i, s := range l {
		items[i] = jen.Lit(s)
	}
	return jen.Index().String().Values(items...)
}

// toolVars binds each contract to its handler, fields in reading order, in
// a table the compiler lays out as data (no code runs per tool at start
// but NewTools' loop).
func toolVars(f *jen.File, pkg *model.Package, binders map[string]string) {
	f.Add(lineComment("toolSpecs are the tools: each contract in reading order, bound to its handler\n" +
		"by name with its concrete types. The schemas come from schemaFS."))
	f.Var().Id("toolSpecs").Op("=").Index(jen.Op("...")).Qual(runtimePkg, "ToolSpec").CustomFunc(multiLine, func(list *jen.Group) {
		for _, t := range pkg.Tools {
			info := jen.Qual(runtimePkg, "ToolInfo").CustomFunc(multiLine, func(g *jen.Group) {
				g.Id("Name").Op(":").Id(nameConst(t))
				g.Id("Version").Op(":").Lit(t.Version)
				g.Id("Effect").Op(":").Add(effectCode(t.Effect))
				g.Id("Description").Op(":").Lit(t.Description)
				if t.Timeout > 0 {
					g.Id("Timeout").Op(":").Add(durationCode(t.Timeout))
				}
				if len(t.Errors) > 0 {
					g.Id("Errors").Op(":").Add(errorCodes(t))
				}
				if t.Title != "" {
					g.Id("Title").Op(":").Lit(t.Title)
				}
				if h := hintsCode(t.Hints); h != nil {
					g.Id("Hints").Op(":").Add(h)
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
			})
			list.Custom(multiLine, jen.Id("Info").Op(":").Add(info), jen.Id("Handler").Op(":").Add(handlerBinding(t, binders[t.Name])))
		}
	})
	if slices.ContainsFunc(pkg.Tools, func(t *model.Tool) bool { return hintsCode(t.Hints) != nil }) {
		f.Comment("stated are the values the directives state hints with.")
		f.Var().Id("stated").Op("=").Index(jen.Lit(2)).Bool().Values(jen.False(), jen.True())
	}
	f.Comment("tools are toolSpecs as the executor holds them.")
	f.Var().Id("tools").Op("=").Qual(runtimePkg, "NewTools").Call(jen.Id("schemaFS"), jen.Id("toolSpecs").Index(jen.Op(":")))
}

var multiLine = jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}

// hintsCode renders the hints a directive states, or nil when it states
// none; each points at a value of stated, so the table stays data.
func hintsCode(h runtime.Hints) jen.Code {
	var fields []jen.Code
	for _, f := range []struct {
		name string
		v    *bool
	}{{"Destructive", h.Destructive}, {"Idempotent", h.Idempotent}, {"OpenWorld", h.OpenWorld}} {
		if f.v == nil {
			continue
		}
		i := 0
		if *f.v {
			i = 1
		}
		fields = append(fields, jen.Id(f.name).Op(":").Op("&").Id("stated").Index(jen.Lit(i)))
	}
	if fields == nil {
		return nil
	}
	return jen.Qual(runtimePkg, "Hints").Values(fields...)
}

// toolSet is the executor's view: the static switch, the list, the lock.
// After the switch, which depends on the names, it prints the same for
// every set:
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
//		return runtime.EmbeddedLock(lockFS)
//	}
func toolSet(f *jen.File, pkg *model.Package) {
	f.Add(lineComment("ToolSet is what the executor holds: the tools a model can call, selected\nby exact name with a static switch. It is a function, so no code can swap the set."))
	f.Func().Id("ToolSet").Params().Qual(runtimePkg, "ToolSet").Block(jen.Return(jen.Id("toolSet").Values()))
	f.Type().Id("toolSet").Struct()

	if len(pkg.Tools) <= flatSwitch {
		f.Add(lineComment("Lookup returns the tool named exactly name, or nil. There is no other way\nfrom a name to a handler."))
		f.Func().Params(jen.Id("toolSet")).Id("Lookup").Params(jen.Id("name").String()).Op("*").Qual(runtimePkg, "Tool").Block(
			jen.Switch(jen.Id("name")).BlockFunc(func(g *jen.Group) {
				for _, t := range pkg.Tools {
					g.Case(jen.Id(nameConst(t))).Block(jen.Return(toolRef(pkg, t)))
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
				for _, group := range byLength(pkg.Tools) {
					g.Case(jen.Lit(len(group[0].Name))).Add(narrow(pkg, plan(group, nil)))
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
		jen.Return(jen.Qual(runtimePkg, "EmbeddedLock").Call(jen.Id("lockFS"))),
	)
}

// flatSwitch is the largest set whose Lookup is one switch over the names;
// past it, Lookup narrows first (see narrow).
const flatSwitch = 16

// leafSwitch is the most names one narrowed switch compares whole.
const leafSwitch = 8

// byLength groups tools (sorted by name) by the length of their names.
func byLength(tools []*model.Tool) [][]*model.Tool {
	groups := map[int][]*model.Tool{}
	for _, t := range tools {
		groups[len(t.Name)] = append(groups[len(t.Name)], t)
	}
	var out [][]*model.Tool
	for _, n := range slices.Sorted(maps.Keys(groups)) {
		out = append(out, groups[n])
	}
	return out
}

// lookupNode is one step of a narrowed Lookup among names of one length:
// a switch on the byte at pos, or (pos < 0) a switch on the whole name
// among tools.
type lookupNode struct {
	pos   int
	next  map[byte]*lookupNode
	tools []*model.Tool
}

// plan splits tools (names of one length) on the byte where their names
// differ most, down to groups of at most leafSwitch names.
func plan(tools []*model.Tool, used []int) *lookupNode {
	pos, buckets := bestByte(tools, used)
	if len(tools) <= leafSwitch || len(buckets) < 2 {
		return &lookupNode{pos: -1, tools: tools}
	}
	n := &lookupNode{pos: pos, next: map[byte]*lookupNode{}}
	for b, group := range buckets {
		n.next[b] = plan(group, append(slices.Clone(used), pos))
	}
	return n
}

// narrow renders a plan.
func narrow(pkg *model.Package, n *lookupNode) *jen.Statement {
	if n.pos < 0 {
		return jen.Switch(jen.Id("name")).BlockFunc(func(g *jen.Group) {
			for _, t := range n.tools {
				g.Case(jen.Id(nameConst(t))).Block(jen.Return(toolRef(pkg, t)))
			}
		})
	}
	return jen.Switch(jen.Id("name").Index(jen.Lit(n.pos))).BlockFunc(func(g *jen.Group) {
		for _, b := range slices.Sorted(maps.Keys(n.next)) {
			g.Case(jen.LitRune(rune(b))).Add(narrow(pkg, n.next[b]))
		}
	})
}

// toolRef is the tool's entry in tools (the tools are sorted by name).
func toolRef(pkg *model.Package, t *model.Tool) jen.Code {
	return jen.Id("tools").Index(jen.Lit(slices.Index(pkg.Tools, t)))
}

// bestByte is the first position, not yet used, whose byte splits the
// names into the most groups.
func bestByte(tools []*model.Tool, used []int) (int, map[byte][]*model.Tool) {
	best, bestPos := map[byte][]*model.Tool(nil), -1
	for pos := range len(tools[0].Name) {
		if slices.Contains(used, pos) {
			continue
		}
		buckets := map[byte][]*model.Tool{}
		for _, t := range tools {
			buckets[t.Name[pos]] = append(buckets[t.Name[pos]], t)
		}
		if len(buckets) > len(best) {
			best, bestPos = buckets, pos
		}
	}
	return bestPos, best
}

// entryPoints are what a harness calls; they print the same for every set:
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
func entryPoints(f *jen.File) {
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

func nameConst(t *model.Tool) string { return "Tool" + t.Ident() }

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
	return jen.Func().Params(params...).Params(gocode.TypeCode(t.ResultType()), jen.Error())
}

// handlerBinding binds the handler, by name with its concrete types, to
// the reader and writer of its types (keel_codecs.go); a handler with
// plain parameters gets them from its argument struct.
func handlerBinding(t *model.Tool, binder string) jen.Code {
	if t.Form == model.StructArgs {
		return jen.Id(binder).Parens(jen.Qual(t.PkgPath, t.Func))
	}
	args := []jen.Code{jen.Id("ctx")}
	for _, p := range t.Params {
		args = append(args, jen.Id("args").Dot(p.Field))
	}
	return jen.Id(binder).Parens(
		jen.Func().Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("args").Id(t.ArgsTypeName())).
			Params(gocode.TypeCode(t.ResultType()), jen.Error()).Block(
			jen.Return(jen.Qual(t.PkgPath, t.Func).Call(args...)),
		),
	)
}

// lineText turns text into // comment lines; jennifer would otherwise render
// a multi-line comment as /* */.
func lineText(text string) string {
	return "// " + strings.ReplaceAll(text, "\n", "\n// ")
}

func lineComment(text string) jen.Code { return jen.Comment(lineText(text)) }

// groupImports groups the import block jennifer writes as goimports does
// (the standard library first, then the rest), by running
// golang.org/x/tools/imports over that block alone: jennifer's output
// around it is gofmt'ed already, so no second pass over a large file.
func groupImports(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "", src, parser.ImportsOnly)
	if err != nil || len(file.Imports) == 0 {
		return src, err
	}
	decl := file.Decls[0]
	start, end := fset.Position(decl.Pos()).Offset, fset.Position(decl.End()).Offset
	const clause = "package p\n\n"
	block, err := imports.Process("", append([]byte(clause), src[start:end]...), &imports.Options{FormatOnly: true, Comments: true, TabIndent: true, TabWidth: 8})
	if err != nil {
		return nil, err
	}
	block = bytes.TrimSuffix(bytes.TrimPrefix(block, []byte(clause)), []byte("\n"))
	return append(append(append([]byte{}, src[:start]...), block...), src[end:]...), nil
}
