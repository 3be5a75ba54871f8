package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/testing/testmod"
)

// Every public package has an Example, the recipe a user reads on
// pkg.go.dev, compiled by every go test (and run, with its Output, where it
// needs no server).
func TestEveryPublicPackageHasAnExample(t *testing.T) {
	root := testmod.Root(t)
	for _, p := range public {
		dir := filepath.Join(root, p)
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range files {
			if !strings.HasSuffix(f.Name(), "_test.go") || found {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, f.Name()), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("the public package %s has no Example", p)
		}
	}
}
