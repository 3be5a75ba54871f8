// Package load is keelgen's first stage: it reads the handler packages with
// golang.org/x/tools/go/packages (syntax and types), finds //keel:tool
// functions, checks them and returns the model, or every problem at once.
package load

import (
	"errors"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/token"
	"go/types"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/tools/go/packages"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/question"
)

// Load reads the packages matched by patterns in dir (default ".") in one
// go/packages call, and returns one model of every //keel:tool function in
// them. A non-nil error means the packages could not be read at all;
// problems in the user's code come back as diagnostics, all of them, and
// then the model is nil.
func Load(dir string, patterns ...string) (*model.Package, []model.Diagnostic, error) {
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	pkgs, err := read(dir, patterns)
	if err != nil {
		return nil, nil, err
	}
	if len(pkgs) == 0 {
		return nil, nil, fmt.Errorf("%s matched no packages%s", strings.Join(patterns, " "), goListSays(dir, patterns))
	}
	return build(pkgs)
}

// read is the one go/packages call.
func read(dir string, patterns []string) ([]*packages.Package, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports | packages.NeedModule,
		Dir: dir,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", strings.Join(patterns, " "), err)
	}
	return pkgs, nil
}

// build is the model of pkgs, read by one go/packages call.
func build(pkgs []*packages.Package) (*model.Package, []model.Diagnostic, error) {
	pkgs = slices.Clone(pkgs)
	slices.SortFunc(pkgs, func(a, b *packages.Package) int { return strings.Compare(a.PkgPath, b.PkgPath) })
	out := &model.Package{Comments: map[string]string{}, Fset: pkgs[0].Fset, Module: mainModule(pkgs)} // one FileSet for every package of a Load
	texts, diags := textDirectives(pkgs)
	out.TextTypes = texts
	var files []*ast.File
	diags = append(diags, unions(pkgs, texts, out)...) // first: a union's fields are checked as alternatives in every package
	for _, pkg := range pkgs {
		if len(pkg.Errors) > 0 {
			ds, err := packageErrors(pkg)
			if err != nil {
				return nil, nil, err
			}
			diags = append(diags, ds...)
			continue
		}
		l := &loader{pkg: pkg, fset: pkg.Fset, texts: texts, out: out}
		files = append(files, l.run(out)...)
		diags = append(diags, l.diags...)
		out.Paths = append(out.Paths, pkg.PkgPath)
	}
	diags = append(diags, checkNames(out.Tools)...)
	if len(diags) == 0 { // a tool refused for another reason may be the one that uses a type
		diags = checkTextTypes(texts, out.Tools, out.Forms)
	}
	if len(out.Tools) == 0 && len(diags) == 0 && len(files) > 0 {
		what := "package " + pkgs[0].Name
		if len(pkgs) > 1 {
			what = fmt.Sprintf("none of the %d packages", len(pkgs))
		}
		diags = append(diags, model.Diagnostic{Pos: pkgs[0].Fset.Position(files[0].Package),
			Message: fmt.Sprintf("%s has no //keel:tool functions; nothing to generate", what)})
	}
	if len(diags) > 0 {
		model.SortDiagnostics(diags)
		return nil, diags, nil
	}
	slices.SortFunc(out.Tools, func(a, b *model.Tool) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(out.Forms, func(a, b model.FormType) int { return strings.Compare(a.Name, b.Name) })
	out.Enums = enums(out.Tools, out.Forms, out.Module, pkgs[0].Fset)
	slices.Sort(out.Exported)
	out.Exported = slices.Compact(out.Exported)
	return out, nil, nil
}

// runtimePath is keel's runtime, whose WithContent wraps a result.
const runtimePath = "github.com/keelgen/keel/runtime"

// withContent returns R of runtime.WithContent[R].
func withContent(t types.Type) (types.Type, bool) {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != runtimePath || n.Obj().Name() != "WithContent" || n.TypeArgs().Len() != 1 {
		return nil, false
	}
	return n.TypeArgs().At(0), true
}

// packageErrors turns a package that does not build into diagnostics, each
// error once, at its position.
func packageErrors(pkg *packages.Package) ([]model.Diagnostic, error) {
	// The go command repeats the type checker's errors as one list error.
	errs := pkg.Errors
	var typed []packages.Error
	for _, e := range errs {
		if e.Kind != packages.ListError {
			typed = append(typed, e)
		}
	}
	if len(typed) > 0 {
		errs = typed
	}
	var ds []model.Diagnostic
	for _, e := range errs {
		ds = append(ds, model.Diagnostic{Pos: parsePos(e.Pos), Message: importAdvice(pkg, e.Msg)})
	}
	if len(pkg.Syntax) == 0 {
		return nil, errors.New(ds[0].String())
	}
	return ds, nil
}

// importAdvice rewrites the type checker's "could not import P (invalid
// package name: "")", which says nothing of the cause, with the go command's
// reason for P and the command that fixes it: a module missing from go.mod
// or from go.sum is what a handler that imports a new library meets first.
func importAdvice(pkg *packages.Package, msg string) string {
	path, ok := strings.CutPrefix(msg, "could not import ")
	if !ok {
		return msg
	}
	path, _, _ = strings.Cut(path, " ")
	dep := pkg.Imports[path]
	if dep == nil {
		return msg
	}
	for _, e := range dep.Errors {
		if e.Kind != packages.ListError {
			continue
		}
		reason, _, _ := strings.Cut(e.Msg, "\n")
		reason, _, _ = strings.Cut(reason, "; to add")
		return fmt.Sprintf("could not import %s: %s; run: go get %s", path, reason, path)
	}
	return msg
}

type loader struct {
	pkg   *packages.Package
	fset  *token.FileSet
	texts model.TextTypes // every package's //keel:text declarations
	diags []model.Diagnostic
	out   *model.Package
}

func (l *loader) errorf(pos token.Pos, format string, args ...any) {
	l.diags = append(l.diags, model.Diagnostic{Pos: l.fset.Position(pos), Message: fmt.Sprintf(format, args...)})
}

// run adds the package's tools, comments and exported names to out, and
// returns its files in name order.
func (l *loader) run(out *model.Package) []*ast.File {
	if out.Dir == "" && len(l.pkg.GoFiles) > 0 {
		out.Dir = filepath.Dir(l.pkg.GoFiles[0])
	}
	// Files in name order, so the result does not depend on load order.
	files := append([]*ast.File(nil), l.pkg.Syntax...)
	slices.SortFunc(files, func(a, b *ast.File) int {
		return strings.Compare(l.fset.Position(a.Pos()).Filename, l.fset.Position(b.Pos()).Filename)
	})
	for _, f := range files {
		funcDocs := map[*ast.CommentGroup]*ast.FuncDecl{}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Doc != nil {
				funcDocs[fd.Doc] = fd
			}
		}
		types := typeDocs(f)
		for _, cg := range f.Comments {
			l.comment(cg, funcDocs[cg], out)
			for _, c := range cg.List {
				if isTupleDirective(c.Text) {
					l.tuple(c, types[cg], out)
				}
			}
		}
		l.collectComments(f, out)
	}
	l.forms(out)
	for _, name := range l.pkg.Types.Scope().Names() {
		if token.IsExported(name) {
			out.Exported = append(out.Exported, name)
		}
	}
	return files
}

// comment checks one comment group for keel directives and adds the tool
// of a directive on fd, the func it documents (nil for none).
func (l *loader) comment(cg *ast.CommentGroup, fd *ast.FuncDecl, out *model.Package) {
	var directives, params, titles, approves, icons, metas []*ast.Comment
	for _, c := range cg.List {
		switch msg := classifyComment(c.Text); {
		case msg != "":
			l.errorf(c.Pos(), "%s", msg)
		case isDirective(c.Text):
			directives = append(directives, c)
		case isParam(c.Text):
			params = append(params, c)
		case isTitle(c.Text):
			titles = append(titles, c)
		case isApprove(c.Text):
			approves = append(approves, c)
		case isIcon(c.Text):
			icons = append(icons, c)
		case isMeta(c.Text):
			metas = append(metas, c)
		}
	}
	switch {
	case len(directives) == 0:
		if len(params) > 0 {
			l.errorf(params[0].Pos(), "//keel:param must be in the doc comment of a //keel:tool func")
		}
		if len(titles) > 0 {
			l.errorf(titles[0].Pos(), "//keel:title must be in the doc comment of a //keel:tool func")
		}
		if len(approves) > 0 {
			l.errorf(approves[0].Pos(), "//keel:approve must be in the doc comment of a //keel:tool func")
		}
		if lost := slices.Concat(icons, metas); len(lost) > 0 {
			l.errorf(lost[0].Pos(), "%s must be in the doc comment of a //keel:tool func", strings.Fields(lost[0].Text)[0])
		}
	case fd == nil:
		l.errorf(directives[0].Pos(), "//keel:tool must be in the doc comment of a top-level func")
	case len(directives) > 1:
		l.errorf(directives[1].Pos(), "func %s has more than one //keel:tool directive", fd.Name.Name)
	default:
		if t := l.tool(fd, directives[0], params); t != nil && l.title(t, titles) && l.approve(t, approves) && l.presentation(t, icons, metas) {
			l.namedFirst(out, t.Description, t.Func, fd.Doc.Pos())
			out.Tools = append(out.Tools, t)
		}
	}
}

// tool checks one annotated func and builds its model.
func (l *loader) tool(fd *ast.FuncDecl, dir *ast.Comment, params []*ast.Comment) *model.Tool {
	d, problems := parseDirective(dir.Text)
	label := fd.Name.Name
	if d.name != "" && toolNameRule.MatchString(d.name) {
		label = d.name
	}
	for _, p := range problems {
		l.errorf(dir.Pos(), "%s: %s", label, p)
	}
	before := len(l.diags)
	t := &model.Tool{
		Name: d.name, Version: d.version, Effect: d.effect, Timeout: d.timeout, Errors: d.errors, Hints: d.hints, Content: d.content, Scopes: d.scopes, Groups: d.groups, LaxNumbers: d.laxNumbers, NoTextCopy: d.noTextCopy,
		Description: docText(fd.Doc), // as written: the author's words are the model's
		Pos:         l.fset.Position(dir.Pos()),
		Func:        fd.Name.Name,
		PkgPath:     l.pkg.PkgPath,
		PkgName:     l.pkg.Name,
	}
	if t.Description == "" {
		l.errorf(dir.Pos(), "%s: the doc comment has no description for the model; write one above the directive", label)
	}
	l.signature(fd, t, label)
	if len(l.diags) == before {
		l.describeParams(t, label, params)
	}
	if len(problems) > 0 || len(l.diags) > before {
		return nil
	}
	return t
}

// title gives t its //keel:title, a short name for people (MCP clients
// show it); one line of text, at most once.
func (l *loader) title(t *model.Tool, titles []*ast.Comment) bool {
	for i, c := range titles {
		text := strings.TrimSpace(c.Text[len(titlePrefix):])
		switch {
		case i > 0:
			l.errorf(c.Pos(), "%s: //keel:title is given twice", t.Name)
			return false
		case text == "":
			l.errorf(c.Pos(), "%s: //keel:title has no text", t.Name)
			return false
		case utf8.RuneCountInString(text) > maxTitle:
			l.errorf(c.Pos(), "%s: //keel:title is %d characters; a title is at most %d (the description says the rest)", t.Name, utf8.RuneCountInString(text), maxTitle)
			return false
		}
		t.Title = text
	}
	return true
}

// maxTitle bounds a tool's title: a name to show, not a description.
const maxTitle = 64

// approve gives t its //keel:approve wording, the approval question's
// first line in the tool's own words: one line of text, at most once,
// whose {member} placeholders are well formed (that each names a member
// of the arguments is checked against the input schema, later).
func (l *loader) approve(t *model.Tool, approves []*ast.Comment) bool {
	for i, c := range approves {
		text := strings.TrimSpace(c.Text[len(approvePrefix):])
		if i > 0 {
			l.errorf(c.Pos(), "%s: //keel:approve is given twice", t.Name)
			return false
		}
		if _, problem := question.ApproveParts(text); problem != "" {
			l.errorf(c.Pos(), "%s: //keel:approve %s", t.Name, problem)
			return false
		}
		t.Approve, t.ApprovePos = text, l.fset.Position(c.Pos())
	}
	return true
}

// describeParams gives plain parameters their //keel:param descriptions.
func (l *loader) describeParams(t *model.Tool, label string, params []*ast.Comment) {
	if len(params) > 0 && t.Form == model.StructArgs {
		l.errorf(params[0].Pos(), "%s: //keel:param describes a plain parameter; %s takes an argument struct: write doc comments on its fields", label, t.Func)
		return
	}
	var names []string
	for _, p := range t.Params {
		names = append(names, p.Name)
	}
	for _, c := range params {
		name, text := parseParam(c.Text)
		i := slices.IndexFunc(t.Params, func(p model.Param) bool { return p.Name == name || p.JSONName == name })
		switch {
		case name == "":
			l.errorf(c.Pos(), "%s: //keel:param needs a parameter name and its description", label)
		case i < 0:
			l.errorf(c.Pos(), "%s: //keel:param %s: %s has no such parameter (its parameters: %s)", label, name, t.Func, strings.Join(names, ", "))
		case text == "":
			l.errorf(c.Pos(), "%s: //keel:param %s has no description", label, name)
		case t.Params[i].Description != "":
			l.errorf(c.Pos(), "%s: //keel:param %s is given twice", label, name)
		default:
			t.Params[i].Description = text
		}
	}
}

// signature checks func(ctx context.Context, args A) (R, error) or
// func(ctx context.Context, p1 T1, ...) (R, error), and that A and R have JSON
// Schemas.
func (l *loader) signature(fd *ast.FuncDecl, t *model.Tool, label string) {
	if fd.Recv != nil {
		l.errorf(fd.Name.Pos(), "%s: //keel:tool is on a method; handlers must be top-level funcs", label)
		return
	}
	if !fd.Name.IsExported() {
		l.errorf(fd.Name.Pos(), "%s: handler %s must be exported: the generated package calls it", label, fd.Name.Name)
		return
	}
	fn, _ := l.pkg.TypesInfo.Defs[fd.Name].(*types.Func)
	if fn == nil {
		return
	}
	sig := fn.Type().(*types.Signature)
	const want = "want func(context.Context, Args) (Result, error) or func(context.Context, p1 T1, ...) (Result, error)"
	if sig.TypeParams().Len() > 0 {
		l.errorf(fd.Name.Pos(), "%s: handler must not be generic", label)
		return
	}
	params, results := sig.Params(), sig.Results()
	if params.Len() == 0 || !isContext(params.At(0).Type()) {
		l.errorf(fd.Type.Params.Pos(), "%s: first parameter must be context.Context; %s", label, want)
		return
	}
	if results.Len() != 2 || !isError(results.At(1).Type()) {
		at := fd.Type.End()
		if fd.Type.Results != nil {
			at = fd.Type.Results.Pos()
		}
		l.errorf(at, "%s: handler must return (Result, error); %s", label, want)
		return
	}
	if sig.Variadic() {
		l.errorf(fd.Type.Params.Pos(), "%s: variadic handlers are not supported", label)
		return
	}
	t.Result = results.At(0).Type()
	if data, ok := withContent(t.Result); ok {
		// The data is the result the output schema describes; the content
		// blocks are checked against content= at run time.
		t.Returned, t.Result = t.Result, data
		if len(t.Content) == 0 {
			l.errorf(fd.Type.Results.Pos(), "%s: a handler that returns runtime.WithContent declares the MIME types of its content: content=image/png,text/*", label)
		}
	} else if len(t.Content) > 0 {
		l.errorf(fd.Type.Results.Pos(), "%s: content= is for a handler that returns runtime.WithContent[R]; this one returns %s", label, l.typeString(t.Result))
	}
	if _, ok := derefStruct(t.Result); !ok {
		l.errorf(fd.Type.Results.Pos(), "%s: result type %s must be a struct (the output schema's root is an object)", label, l.typeString(t.Result))
	} else {
		c := l.schemaFacts(fd.Type.Results.Pos(), label+": output", t.Result, true)
		t.RecursiveOutput, t.LibraryNulls = c.recursive, c.libraryNulls
		t.OwnText = l.ownText(fd.Type.Results.Pos(), label, t.Result)
		if t.OwnText && t.NoTextCopy {
			l.errorf(fd.Type.Results.Pos(), "%s: text=none and an MCPText method: the text block holds the author's words, not a copy of the JSON; drop one", label)
		}
	}

	if params.Len() == 2 {
		if p, ok := types.Unalias(params.At(1).Type()).(*types.Pointer); ok && l.isArgsStruct(p.Elem()) {
			l.errorf(params.At(1).Pos(), "%s: the argument struct is a pointer; take it by value: func(ctx context.Context, %s %s) (keel never passes nil)",
				label, params.At(1).Name(), l.typeString(p.Elem()))
			return
		}
	}
	if params.Len() == 2 && l.isArgsStruct(params.At(1).Type()) {
		t.Form = model.StructArgs
		t.Args = params.At(1).Type()
		if named, ok := types.Unalias(t.Args).(*types.Named); ok && !named.Obj().Exported() {
			l.errorf(fd.Type.Params.Pos(), "%s: argument type %s must be exported: the generated package names it", label, named.Obj().Name())
			return
		}
		t.RecursiveInput = l.checkSchema(fd.Type.Params.Pos(), label+": input", t.Args, false)
		return
	}
	t.Form = model.PlainParams
	seen := map[string]string{}
	for i := 1; i < params.Len(); i++ {
		p := params.At(i)
		if p.Name() == "" || p.Name() == "_" {
			l.errorf(fd.Type.Params.Pos(), "%s: parameter %d needs a name: it becomes the JSON member name", label, i+1)
			continue
		}
		param := model.Param{Name: p.Name(), Field: exportedName(p.Name()), JSONName: snakeCase(p.Name()), Type: p.Type()}
		if other, dup := seen[param.JSONName]; dup {
			l.errorf(p.Pos(), "%s: parameters %s and %s both become JSON member %q", label, other, p.Name(), param.JSONName)
			continue
		}
		seen[param.JSONName] = p.Name()
		t.RecursiveInput = l.checkSchema(p.Pos(), label+": parameter "+p.Name(), p.Type(), false) || t.RecursiveInput
		t.Params = append(t.Params, param)
	}
}

// checkSchema reports what of t has no JSON Schema, and whether t is
// recursive.
func (l *loader) checkSchema(pos token.Pos, path string, t types.Type, output bool) (recursive bool) {
	return l.schemaFacts(pos, path, t, output).recursive
}

// schemaFacts reports what of t has no JSON Schema, and returns what the
// walk found: whether t is recursive, whether a library's nil pointer
// field is null in it.
func (l *loader) schemaFacts(pos token.Pos, path string, t types.Type, output bool) *schemaChecker {
	c := &schemaChecker{qualifier: types.RelativeTo(l.pkg.Types), output: output, texts: l.texts, library: l.out.Library, union: l.out.IsUnion}
	c.check(t, path, pos)
	for _, p := range c.problems {
		at := p.pos
		if !at.IsValid() || !l.inPackage(at) {
			at = pos
		}
		l.errorf(at, "%s", p.msg)
	}
	if c.recursive {
		// Its schema keeps types in $defs by their names alone.
		for _, name := range slices.Sorted(maps.Keys(c.named)) {
			if same := c.named[name]; len(same) > 1 {
				l.errorf(pos, "%s: types %s and %s are both named %s, and a schema with a recursive type names its types in $defs by name alone; rename one",
					path, types.TypeString(same[0], nil), types.TypeString(same[1], nil), name)
			}
		}
	}
	return c
}

// inPackage reports whether pos is in one of the handler package's files, so
// positions always point at code the user can edit here.
func (l *loader) inPackage(pos token.Pos) bool {
	file := l.fset.Position(pos).Filename
	for _, f := range l.pkg.GoFiles {
		if f == file {
			return true
		}
	}
	return false
}

func (l *loader) typeString(t types.Type) string {
	return types.TypeString(t, types.RelativeTo(l.pkg.Types))
}

// checkNames reports a tool name declared twice, at both places, and names
// that map to the same Go identifier.
func checkNames(tools []*model.Tool) []model.Diagnostic {
	var diags []model.Diagnostic
	byName := map[string]*model.Tool{}
	byIdent := map[string]*model.Tool{}
	at := func(t, other *model.Tool) string {
		where := fmt.Sprintf("%s:%d", filepath.Base(t.Pos.Filename), t.Pos.Line)
		if t.PkgPath != other.PkgPath {
			where += " in " + t.PkgPath
		}
		return where
	}
	for _, t := range tools {
		if first, dup := byName[t.Name]; dup {
			diags = append(diags,
				model.Diagnostic{Pos: first.Pos, Message: fmt.Sprintf("duplicate tool name %q (also declared at %s)", t.Name, at(t, first))},
				model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("duplicate tool name %q (first declared at %s)", t.Name, at(first, t))})
			continue
		}
		byName[t.Name] = t
		if first, dup := byIdent[t.Ident()]; dup {
			diags = append(diags, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf(
				"tool names %q and %q both map to the Go identifier %s", first.Name, t.Name, t.Ident())})
			continue
		}
		byIdent[t.Ident()] = t
	}
	return diags
}

// collectComments records type and field doc comments for schema
// descriptions, keyed as invopop/jsonschema's CommentMap expects.
func (l *loader) collectComments(f *ast.File, out *model.Package) {
	into := out.Comments
	eachType(f, func(ts *ast.TypeSpec, doc *ast.CommentGroup) {
		key := l.pkg.PkgPath + "." + ts.Name.Name
		if text := docText(doc); text != "" {
			into[key] = text
			l.namedFirst(out, text, ts.Name.Name, doc.Pos())
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return
		}
		for _, field := range st.Fields.List {
			doc := field.Doc
			if doc == nil {
				doc = field.Comment
			}
			text := docText(doc)
			if text == "" {
				continue
			}
			for _, name := range field.Names {
				into[key+"."+name.Name] = text
				l.namedFirst(out, text, name.Name, doc.Pos())
			}
		}
	})
}

// docText is a doc comment as plain text for a model: directives dropped,
// paragraphs kept, lines within a paragraph joined (go/doc/comment).
func docText(cg *ast.CommentGroup) string {
	text := cg.Text() // drops //keel:tool and other directives
	if text == "" {
		return ""
	}
	var p comment.Parser
	pr := comment.Printer{TextWidth: -1}
	return strings.TrimSpace(string(pr.Text(p.Parse(text))))
}

func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func isError(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// isArgsStruct reports whether t is a named struct whose fields are the
// argument object's members. A struct with a JSON form of its own
// (time.Time, url.URL, a JSONSchema method) is one value: a handler taking
// only it has one plain parameter.
func (l *loader) isArgsStruct(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || knownLeaf(n) || model.HasMethod(n, "JSONSchema") || model.HasMethod(n, "JSONSchemaAlias") || model.HasMethod(n, "MarshalJSON") || model.IsTextType(n, l.texts) {
		return false
	}
	_, ok = n.Underlying().(*types.Struct)
	return ok
}

func derefStruct(t types.Type) (*types.Struct, bool) {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	s, ok := types.Unalias(t).Underlying().(*types.Struct)
	return s, ok
}

// parsePos reads "file:line:col" from a packages.Error.
func parsePos(s string) token.Position {
	parts := strings.Split(s, ":")
	if len(parts) >= 3 {
		line, err1 := strconv.Atoi(parts[len(parts)-2])
		col, err2 := strconv.Atoi(parts[len(parts)-1])
		if err1 == nil && err2 == nil {
			return token.Position{Filename: strings.Join(parts[:len(parts)-2], ":"), Line: line, Column: col}
		}
	}
	if len(parts) == 2 {
		if line, err := strconv.Atoi(parts[1]); err == nil {
			return token.Position{Filename: parts[0], Line: line}
		}
	}
	return token.Position{Filename: s}
}

// namedFirst records, for -lint, a doc text that starts with the Go name it
// documents ("LookupIncident returns ..."), as Go's doc convention writes
// it: the model reads the text as written, a name it does not know
// included, so -lint names it with the edit that leaves the name out.
func (l *loader) namedFirst(out *model.Package, text, ident string, pos token.Pos) {
	if ident == "" || !strings.HasPrefix(text, ident+" ") {
		return
	}
	if out.NamedFirst == nil {
		out.NamedFirst = map[string][]token.Position{}
	}
	out.NamedFirst[text] = append(out.NamedFirst[text], l.fset.Position(pos))
}

// goListSays is why the go command matched no packages, when it says so
// (a go.mod that needs go mod tidy, a pattern outside the module): the
// reason go/packages does not pass on.
func goListSays(dir string, patterns []string) string {
	cmd := exec.Command("go", append([]string{"list"}, patterns...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err == nil || text == "" {
		return ""
	}
	const most = 600
	if len(text) > most {
		text = text[:most] + " …"
	}
	var b strings.Builder
	for i, line := range strings.Split(text, "\n") {
		switch {
		case i == 0:
		case strings.HasSuffix(b.String(), ":"):
			b.WriteString(" ")
		default:
			b.WriteString("; ")
		}
		b.WriteString(strings.TrimSpace(line))
	}
	return ": the go command says: " + b.String()
}

// ownText reports whether the result type r has the method MCPText()
// string (on R or *R): the text an MCP client's text block carries instead
// of the result's JSON. A method of that name with another signature is
// an error, not a text silently ignored.
func (l *loader) ownText(pos token.Pos, label string, r types.Type) bool {
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(r), true, l.pkg.Types, "MCPText")
	m, ok := obj.(*types.Func)
	if !ok {
		return false
	}
	sig := m.Signature()
	if sig.Params().Len() != 0 || sig.Results().Len() != 1 || !types.Identical(sig.Results().At(0).Type(), types.Typ[types.String]) {
		l.errorf(pos, "%s: %s.MCPText must be func() string: the text an MCP client shows for the result", label, l.typeString(r))
		return false
	}
	return true
}
