package load

import (
	"go/ast"
	"go/token"
	"reflect"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

const tuplePrefix = "//keel:tuple"

// isTupleDirective reports whether a comment line is a //keel:tuple line.
func isTupleDirective(text string) bool { return isKeyword(text, tuplePrefix) }

// typeDocs maps the doc comment of each type declared in f to its spec.
func typeDocs(f *ast.File) map[*ast.CommentGroup]*ast.TypeSpec {
	out := map[*ast.CommentGroup]*ast.TypeSpec{}
	eachType(f, func(ts *ast.TypeSpec, doc *ast.CommentGroup) {
		if doc != nil {
			out[doc] = ts
		}
	})
	return out
}

// eachType calls fn with each type f declares and its doc comment (the
// declaration's, for a lone spec without its own), nil when none.
func eachType(f *ast.File, fn func(ts *ast.TypeSpec, doc *ast.CommentGroup)) {
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			doc := ts.Doc
			if doc == nil && len(gd.Specs) == 1 {
				doc = gd.Doc
			}
			fn(ts, doc)
		}
	}
}

// tuple records the struct type whose doc comment holds the //keel:tuple
// line c (ts nil: the comment documents no type), after checking what a
// tuple's items need: exported, named fields, each always there.
//
//	// Point is a longitude and a latitude, written [lon, lat].
//	//
//	//keel:tuple
//	type Point struct {
//		Lon float64
//		Lat float64
//	}
func (l *loader) tuple(c *ast.Comment, ts *ast.TypeSpec, out *model.Package) {
	if strings.TrimSpace(c.Text[len(tuplePrefix):]) != "" {
		l.errorf(c.Pos(), "//keel:tuple takes no arguments")
		return
	}
	st, ok := (*ast.StructType)(nil), ts != nil
	if ok {
		st, ok = ts.Type.(*ast.StructType)
	}
	if !ok || ts.TypeParams != nil {
		l.errorf(c.Pos(), "//keel:tuple must be in the doc comment of a struct type (not generic): its fields, in order, are the items of a JSON array")
		return
	}
	if _, union := out.Unions[l.pkg.PkgPath+"."+ts.Name.Name]; union {
		l.errorf(c.Pos(), "//keel:tuple: %s is a //keel:union too; a type is one or the other", ts.Name.Name)
		return
	}
	if len(st.Fields.List) == 0 {
		l.errorf(c.Pos(), "//keel:tuple: %s has no fields, so no items", ts.Name.Name)
		return
	}
	for _, field := range st.Fields.List {
		if len(field.Names) == 0 {
			l.errorf(field.Pos(), "//keel:tuple: an embedded field is no item; name it")
			continue
		}
		for _, name := range field.Names {
			if !name.IsExported() {
				l.errorf(name.Pos(), "//keel:tuple: field %s is unexported, so no item; export it", name.Name)
			}
		}
		if field.Tag == nil {
			continue
		}
		tag, _ := reflect.StructTag(strings.Trim(field.Tag.Value, "`")).Lookup("json")
		if _, opts, _ := strings.Cut(tag, ","); strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") || tag == "-" {
			l.errorf(field.Pos(), "//keel:tuple: an item is always written, so its field takes no omitempty, omitzero or \"-\"")
		}
	}
	if out.Tuples == nil {
		out.Tuples = map[string]token.Position{}
	}
	out.Tuples[l.pkg.PkgPath+"."+ts.Name.Name] = l.fset.Position(c.Pos())
}
