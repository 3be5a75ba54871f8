package render

import (
	"go/token"
	"go/types"
	"maps"
	pathpkg "path"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/gocode"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/runtime"
)

// toolsPlan is keel_tools.go decided before a line of it is printed: the
// names it writes, each tool's row of the table, and how Lookup narrows a
// name. planTools asks the model every question; emitTools prints the
// answers and asks none.
type toolsPlan struct {
	outPkg    string
	paths     []string // the handler packages, for the package comment
	setDigest string
	imports   []importName
	rows      []toolRow // sorted by name, as the tools are
	// argsStructs are the argument structs of the plain-parameter tools.
	argsStructs []jen.Code
	stated      bool // some tool states a hint, so the file declares stated
	lookup      lookupPlan
}

// importName is the name a generated file gives an imported package.
type importName struct {
	path, name string
	alias      bool // the package's own name clashes; name is chosen from its path
}

// toolRow is one tool of the table, with the names the file uses for it.
type toolRow struct {
	tool   *model.Tool
	index  int    // its entry in tools
	konst  string // its name constant
	binder string // the keel_codecs.go function that binds its handler
	hints  []hintField
	// handlerType is the handler's signature, and binding the handler
	// bound to its reader and writer: Go types, spelled for the file.
	handlerType, binding jen.Code
}

// hintField is a hint a directive states: the field, and the index of the
// value in stated it points at.
type hintField struct {
	field  string
	stated int
}

// lookupPlan is Lookup: one switch over the names for a small set, else a
// switch on the length and then on bytes (see splitLookup).
type lookupPlan struct {
	flat     bool
	byLength []lengthCase
}

type lengthCase struct {
	length int
	root   *lookupNode
}

// lookupNode is one step of a narrowed Lookup among names of one length:
// a switch on the byte at pos, or (pos < 0) a switch on the whole name
// among rows.
type lookupNode struct {
	pos  int
	next map[byte]*lookupNode
	rows []toolRow
}

// flatSwitch is the largest set whose Lookup is one switch over the names;
// past it, Lookup narrows first.
const flatSwitch = 16

// leafSwitch is the most names one narrowed switch compares whole.
const leafSwitch = 8

func planTools(pkg *model.Package, outPkg, setDigest string, imports []importName, binders map[string]string) *toolsPlan {
	p := &toolsPlan{outPkg: outPkg, paths: pkg.Paths, setDigest: setDigest, imports: imports}
	for i, t := range pkg.Tools {
		row := toolRow{tool: t, index: i, konst: nameConst(t), binder: binders[t.Name], hints: statedHints(t.Hints),
			handlerType: handlerFuncType(t), binding: handlerBinding(t, binders[t.Name])}
		p.stated = p.stated || len(row.hints) > 0
		p.rows = append(p.rows, row)
	}
	p.argsStructs = gocode.ArgsStructs(pkg.Tools)
	p.lookup.flat = len(p.rows) <= flatSwitch
	if !p.lookup.flat {
		for _, group := range byLength(p.rows) {
			p.lookup.byLength = append(p.lookup.byLength, lengthCase{length: len(group[0].tool.Name), root: splitLookup(group, nil)})
		}
	}
	return p
}

func nameConst(t *model.Tool) string { return "Tool" + t.Ident() }

// statedHints are the hints a directive states, each pointing at a value
// of stated, so the table stays data.
func statedHints(h runtime.Hints) []hintField {
	var out []hintField
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
		out = append(out, hintField{field: f.name, stated: i})
	}
	return out
}

// byLength groups rows (sorted by name) by the length of their names.
func byLength(rows []toolRow) [][]toolRow {
	groups := map[int][]toolRow{}
	for _, r := range rows {
		groups[len(r.tool.Name)] = append(groups[len(r.tool.Name)], r)
	}
	var out [][]toolRow
	for _, n := range slices.Sorted(maps.Keys(groups)) {
		out = append(out, groups[n])
	}
	return out
}

// splitLookup splits rows (names of one length) on the byte where their
// names differ most, down to groups of at most leafSwitch names.
func splitLookup(rows []toolRow, used []int) *lookupNode {
	pos, buckets := bestByte(rows, used)
	if len(rows) <= leafSwitch || len(buckets) < 2 {
		return &lookupNode{pos: -1, rows: rows}
	}
	n := &lookupNode{pos: pos, next: map[byte]*lookupNode{}}
	for b, group := range buckets {
		n.next[b] = splitLookup(group, append(slices.Clone(used), pos))
	}
	return n
}

// bestByte is the first position, not yet used, whose byte splits the
// names into the most groups.
func bestByte(rows []toolRow, used []int) (int, map[byte][]toolRow) {
	best, bestPos := map[byte][]toolRow(nil), -1
	for pos := range len(rows[0].tool.Name) {
		if slices.Contains(used, pos) {
			continue
		}
		buckets := map[byte][]toolRow{}
		for _, r := range rows {
			buckets[r.tool.Name[pos]] = append(buckets[r.tool.Name[pos]], r)
		}
		if len(buckets) > len(best) {
			best, bestPos = buckets, pos
		}
	}
	return bestPos, best
}

// planImports names every package the generated files import, so
// jennifer writes no alias that merely repeats a name. A package of the
// user's whose name another import or an identifier of the generated code
// also uses (tools/notes/store and tools/weather/store; a handler package
// named tools, runtime, wire or context) is named by its parent directory
// and its name (notesstore, intools): stable, readable in review, and
// chosen from the paths alone, so it does not shift when another tool is
// added. A package named as the generated package is (admin generated
// into admin) is named so too: an import under the name of the file's
// own package reads as itself.
func planImports(pkg *model.Package, outPkg string) []importName {
	out := []importName{{path: runtimePkg, name: "runtime"}, {path: wirePkg, name: "wire"}}
	names := map[string]string{} // path → name
	add := func(path, name string) { names[path] = name }
	seen := map[types.Type]bool{}
	for _, t := range pkg.Tools {
		add(t.PkgPath, t.PkgName)
		for _, typ := range append([]types.Type{t.Args, t.ResultType()}, paramTypes(t)...) {
			gocode.Packages(typ, seen, add)
		}
	}
	for _, f := range pkg.Forms {
		add(askPkg, "ask")
		gocode.Packages(f.Type, seen, add)
	}
	taken := map[string]bool{outPkg: true}
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
	var clashing []string
	for _, path := range slices.Sorted(maps.Keys(names)) {
		name := names[path]
		if standard(path) || count[name] == 1 && !taken[name] {
			out = append(out, importName{path: path, name: name})
			taken[name] = true
			continue
		}
		clashing = append(clashing, path)
	}
	for _, path := range clashing {
		out = append(out, importName{path: path, name: importAlias(path, names[path], taken), alias: true})
	}
	return out
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
// runtime, wire or ask), whose names the generated code writes as they are.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") || path == runtimePkg || path == wirePkg || path == askPkg
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
