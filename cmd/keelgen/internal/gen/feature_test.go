package gen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/cmd/keelgen/internal/gen"
	"github.com/keelgen/keel/internal/testing/txtartest"
)

// Each testdata/feature/*.txtar is one feature of the handler's types (a
// kind of member, text types, enums, optional forms, containers, bounds,
// plain parameters) and, in "want", what keelgen makes of it: the tool's
// schemas, the argument structs keelgen emits, and keel_codecs.go after its
// imports, which reads and writes those types. A change to one feature's
// generated code shows in its own case; -update rewrites them.
func TestFeatureFragments(t *testing.T) {
	t.Parallel()
	txtartest.Run(t, "testdata/feature/*.txtar", *update, func(t *testing.T, sections map[string]string) string {
		dir, shared := caseDir(t, "feature", path.Base(t.Name())) // sections["h.go"] as h/h.go
		res := generate(t, gen.Config{Dir: dir, Patterns: []string{"./h"}, OutDir: "out", Shared: shared})
		byPath := map[string][]byte{}
		for _, f := range res.Files {
			byPath[f.Path] = f.Content
		}
		var got strings.Builder
		for _, f := range res.Files {
			if strings.HasPrefix(f.Path, "schemas/") {
				got.WriteString("# " + f.Path + "\n" + string(f.Content))
			}
		}
		if types := declsOf(t, byPath[files.GoFileName], token.TYPE, "toolSet"); types != "" {
			got.WriteString("# " + files.GoFileName + ", the types keelgen emits\n" + types)
		}
		got.WriteString("# " + files.CodecFileName + ", after its imports\n" + afterImports(t, byPath[files.CodecFileName]))
		return got.String()
	})
}

// declsOf is the source of src's top-level declarations of kind tok, but
// those of the names in except.
func declsOf(t *testing.T, src []byte, tok token.Token, except ...string) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != tok || len(g.Specs) != 1 {
			continue
		}
		if s, ok := g.Specs[0].(*ast.TypeSpec); ok && slices.Contains(except, s.Name.Name) {
			continue
		}
		start := g.Pos()
		if g.Doc != nil {
			start = g.Doc.Pos()
		}
		out.Write(src[fset.Position(start).Offset:fset.Position(g.End()).Offset])
		out.WriteString("\n")
	}
	return out.String()
}

// afterImports is src from the first declaration after its import block.
func afterImports(t *testing.T, src []byte) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue
		}
		start := d.Pos()
		for _, c := range f.Comments {
			if c.End() < d.Pos() && c.Pos() > f.Decls[0].End() {
				start = min(start, c.Pos())
			}
		}
		return string(src[fset.Position(start).Offset:])
	}
	return ""
}
