package gocode_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strconv"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/gocode"
)

// A struct tag is written so that it stays a tag: one that holds a
// backquote cannot stand in a raw string (the literal would end there and
// the rest of the tag become Go), so it is written as a quoted literal.
func TestTagsStayTags(t *testing.T) {
	for _, tag := range []string{`json:"a"`, "json:\"a\" note:\"`+panic(1)+`\"", "x:\"`\""} {
		st := types.NewStruct([]*types.Var{types.NewField(token.NoPos, nil, "A", types.Typ[types.String], false)}, []string{tag})
		f := jen.NewFile("p")
		f.Type().Id("T").Add(gocode.TypeCode(st))
		var buf bytes.Buffer
		if err := f.Render(&buf); err != nil {
			t.Fatalf("%q: %v", tag, err)
		}
		file, err := parser.ParseFile(token.NewFileSet(), "t.go", buf.Bytes(), 0)
		if err != nil {
			t.Fatalf("%q: the rendered Go does not parse: %v\n%s", tag, err, buf.Bytes())
		}
		var got []string
		ast.Inspect(file, func(n ast.Node) bool {
			if fl, ok := n.(*ast.Field); ok && fl.Tag != nil {
				s, err := strconv.Unquote(fl.Tag.Value)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, s)
			}
			return true
		})
		if len(got) != 1 || got[0] != tag {
			t.Fatalf("%q came out as the tags %q:\n%s", tag, got, buf.Bytes())
		}
	}
}
