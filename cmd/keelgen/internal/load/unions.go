package load

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

const unionPrefix = "//keel:union"

// isUnionDirective reports whether a comment line is a //keel:union line.
func isUnionDirective(text string) bool { return isKeyword(text, unionPrefix) }

// unions records the //keel:union types of every package that loaded.
func unions(pkgs []*packages.Package, texts model.TextTypes, out *model.Package) []model.Diagnostic {
	var diags []model.Diagnostic
	for _, pkg := range pkgs {
		if len(pkg.Errors) == 0 {
			l := &loader{pkg: pkg, fset: pkg.Fset, texts: texts, out: out}
			l.unions(out)
			diags = append(diags, l.diags...)
		}
	}
	return diags
}

// unions records the package's //keel:union types.
func (l *loader) unions(out *model.Package) {
	for _, f := range l.pkg.Syntax {
		types := typeDocs(f)
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if isUnionDirective(c.Text) {
					l.union(c, types[cg], out)
				}
			}
		}
	}
}

// union records the struct type whose doc comment holds the //keel:union
// line c (ts nil: the comment documents no type), after checking what a
// union's alternatives need: two or more exported, named pointer fields,
// one per alternative, of which a value sets exactly one.
//
//	// A variable's value: text, a number or a flag.
//	//
//	//keel:union
//	type Value struct {
//		Text   *string
//		Number *float64
//		Flag   *bool
//	}
//
// Which JSON types the alternatives may have is render's to check, with
// the readers it plans.
func (l *loader) union(c *ast.Comment, ts *ast.TypeSpec, out *model.Package) {
	if strings.TrimSpace(c.Text[len(unionPrefix):]) != "" {
		l.errorf(c.Pos(), "//keel:union takes no arguments")
		return
	}
	st, ok := (*ast.StructType)(nil), ts != nil
	if ok {
		st, ok = ts.Type.(*ast.StructType)
	}
	if !ok || ts.TypeParams != nil {
		l.errorf(c.Pos(), "//keel:union must be in the doc comment of a struct type (not generic): one pointer field per alternative, one of them set")
		return
	}
	count := 0
	for _, field := range st.Fields.List {
		if len(field.Names) == 0 {
			l.errorf(field.Pos(), "//keel:union: an embedded field is no alternative; name it")
			continue
		}
		if _, ptr := field.Type.(*ast.StarExpr); !ptr {
			l.errorf(field.Pos(), "//keel:union: an alternative is a pointer field (nil: not this one); make it *%s", types.ExprString(field.Type))
		}
		for _, name := range field.Names {
			count++
			if !name.IsExported() {
				l.errorf(name.Pos(), "//keel:union: field %s is unexported, so no alternative; export it", name.Name)
			}
		}
	}
	if count < 2 {
		l.errorf(c.Pos(), "//keel:union: %s needs two or more alternatives", ts.Name.Name)
		return
	}
	if out.Unions == nil {
		out.Unions = map[string]token.Position{}
	}
	out.Unions[l.pkg.PkgPath+"."+ts.Name.Name] = l.fset.Position(c.Pos())
}
