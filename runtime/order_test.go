package runtime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/toolrules"
)

// theOrder is the executor's order as every text of it writes it.
const theOrder = "registered and visible? → scopes → rate → input schema → policy → handler → business or internal error → output schema → result"

// spine is the order as execute runs it: the call that makes each stage,
// in turn (the first, the lookup, has none of its own).
var spine = []string{"kept", "scoped", "limited", "input", "policy", "invoke", "classify", "output"}

// The order is one text: execute's stage calls are spine, in that order,
// and each copy of the order (the package doc, Execute's comment,
// docs/durable.md) writes theOrder; docs/executor.md's diagram has its
// stages in that order.
func TestOneTextOfTheOrder(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "executor.go", nil, parser.ParseComments)
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
		t.Errorf("execute calls its stages as %v, not %v", calls, spine)
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
