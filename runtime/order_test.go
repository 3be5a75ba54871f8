package runtime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/toolrules"
)

// theOrder is the executor's order as every text of it writes it.
const theOrder = "registered and visible? → scopes → rate → input schema → recorded outcome → policy → handler → business or internal error → output schema → result"

// spine is the order as execute runs it: the call that makes each stage,
// in turn (the first, the lookup, has none of its own).
var spine = []string{"kept", "scoped", "limited", "input", "once", "policy", "invoke", "classify", "output"}

// The order is one text: execute's stage calls are spine, in that order,
// in order.go, where every stage method lives; each copy of the order (the
// package doc, Execute's comment, docs/durable.md, and any other file of
// the repository that starts to write it) writes theOrder; and
// docs/executor.md's diagram has its stages in that order.
func TestOneTextOfTheOrder(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "order.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "execute" {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && slices.Contains(spine, sel.Sel.Name) && !slices.Contains(calls, sel.Sel.Name) {
					calls = append(calls, sel.Sel.Name)
				}
			}
			return true
		})
	}
	if !slices.Equal(calls, spine) {
		t.Errorf("order.go's execute calls its stages as %v, not %v", calls, spine)
	}
	defined := map[string]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
			defined[fd.Name.Name] = true
		}
	}
	for _, stage := range spine {
		if !defined[stage] {
			t.Errorf("the stage method %s is not in order.go, beside the spine", stage)
		}
	}
	flat := regexp.MustCompile(`\s*\n(//)?\s*`)
	for _, path := range []string{"doc.go", "executor.go", "../docs/durable.md"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if text := flat.ReplaceAllString(string(b), " "); !strings.Contains(text, theOrder) {
			t.Errorf("%s does not write the order as %q", path, theOrder)
		}
	}
	// Any other copy: a text that names the first stages as the order does
	// writes all of it.
	start := regexp.MustCompile(`registered(,| and)[^.]{0,40}→`)
	copies := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".go")) || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := flat.ReplaceAllString(string(b), " ")
		for _, at := range start.FindAllStringIndex(text, -1) {
			copies++
			if !strings.HasPrefix(text[at[0]:], theOrder) {
				t.Errorf("%s writes the order otherwise: %.160s", path, text[at[0]:])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if copies < 3 {
		t.Fatalf("found %d copies of the order in the repository; the walk missed the tree", copies)
	}
	b, err := os.ReadFile("../docs/executor.md")
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for _, stage := range []string{"registered, and not hidden", "scopes (", "rate (", "input:", "policy (", "handler,", "output:", "ToolResult ok=true"} {
		i := strings.Index(string(b), stage)
		if i <= last {
			t.Errorf("docs/executor.md's diagram has %q out of the order (or not at all)", stage)
		}
		last = i
	}
}

// The executor's codes are the ones toolrules keeps business codes from.
func TestExecutorCodesAreTheRulesCodes(t *testing.T) {
	var codes []string
	for _, c := range executorCodes {
		codes = append(codes, string(c))
	}
	if !slices.Equal(codes, toolrules.ExecutorCodes) {
		t.Fatalf("runtime's codes %v, toolrules' %v", codes, toolrules.ExecutorCodes)
	}
}
