package render

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixed text a printer writes is shown in its doc comment, as an
// indented block; each block is found, as written, in the committed
// output for the example, so the generator shows the output's shape and
// the two cannot drift.
func TestEmitterDocsShowTheirOutput(t *testing.T) {
	var out strings.Builder
	for _, name := range []string{"keel_tools.go", "keel_codecs.go"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "generated", name))
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	sources, _ := filepath.Glob("*.go")
	blocks := 0
	for _, path := range sources {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Doc == nil {
				continue
			}
			if block := codeBlock(fn.Doc.Text()); block != "" {
				blocks++
				if !strings.Contains(out.String(), block) {
					t.Errorf("%s: the output %s shows is not in generated/:\n%s", path, fn.Name.Name, block)
				}
			}
		}
	}
	if blocks < 3 {
		t.Errorf("found %d output blocks in render's docs; emitCall, toolSet and entryPoints each show one", blocks)
	}
}

// codeBlock is the indented block of a doc comment's text, unindented.
func codeBlock(doc string) string {
	var lines []string
	for _, l := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(l, "\t"):
			lines = append(lines, strings.TrimPrefix(l, "\t"))
		case l == "" && len(lines) > 0:
			lines = append(lines, "")
		case len(lines) > 0:
			return strings.TrimSpace(strings.Join(lines, "\n"))
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
