// Package apicheck holds checks on keel's public surface as a whole.
package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/testing/testmod"
)

// No public package, generated code included, has an exported
// package-level variable: any importer could change it for every user in
// the process (widen the limits, swap the tool set), in a runtime that
// promises to fail closed. Errors are the exception: sentinel values
// compared with errors.Is.
func TestNoExportedVariables(t *testing.T) {
	root := testmod.Root(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "internal" || name == "cmd") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" || f.Name.Name == "tools" && rel == "tools.go" {
			return nil
		}
		files++
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !name.IsExported() || i < len(vs.Values) && isError(vs.Values[i]) {
						continue
					}
					t.Errorf("%s: exported package-level variable %s (make it a function that returns a copy, or unexported)", fset.Position(name.Pos()), name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 30 {
		t.Fatalf("read %d files; the walk missed the public packages", files)
	}
}

// isError reports a value made by errors.New or fmt.Errorf.
func isError(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
}
