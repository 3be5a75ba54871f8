package load

import (
	"go/ast"
	"go/types"
	"slices"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// askPath is keel's package of a handler's questions to the client.
const askPath = "github.com/keelgen/keel/runtime/ask"

// forms adds to out each type the package's handlers ask a person to fill
// with ask.Elicit[T], once, unless *T writes its own form (ElicitSchema
// and ReadElicit): keelgen generates the others' schema and reader, and the
// output package registers them.
func (l *loader) forms(out *model.Package) {
	idents := make([]*ast.Ident, 0, len(l.pkg.TypesInfo.Instances))
	for id, inst := range l.pkg.TypesInfo.Instances {
		if f, ok := l.pkg.TypesInfo.Uses[id].(*types.Func); ok && f.Pkg() != nil && f.Pkg().Path() == askPath && f.Name() == "Elicit" && inst.TypeArgs.Len() > 0 {
			idents = append(idents, id)
		}
	}
	slices.SortFunc(idents, func(a, b *ast.Ident) int { return int(a.Pos() - b.Pos()) })
	for _, id := range idents {
		t := l.pkg.TypesInfo.Instances[id].TypeArgs.At(0)
		named, ok := types.Unalias(t).(*types.Named)
		if !ok || named.TypeParams().Len() > 0 || named.TypeArgs().Len() > 0 {
			l.errorf(id.Pos(), "ask.Elicit[%s]: a form is a named struct type keelgen can name (not a type parameter, a generic or an unnamed type); ask with the form's own type", l.typeString(t))
			continue
		}
		if hasOwnForm(named) {
			continue
		}
		name := named.Obj().Pkg().Path() + "." + named.Obj().Name()
		if slices.ContainsFunc(out.Forms, func(f model.FormType) bool { return f.Name == name }) {
			continue
		}
		if _, ok := named.Underlying().(*types.Struct); !ok {
			l.errorf(id.Pos(), "ask.Elicit[%s]: a form is a struct, one field per member of the form", l.typeString(t))
			continue
		}
		if !named.Obj().Exported() {
			l.errorf(id.Pos(), "ask.Elicit[%s]: the form's type must be exported: the generated package names it", l.typeString(t))
			continue
		}
		before := len(l.diags)
		if l.checkSchema(id.Pos(), "form "+l.typeString(t), named, false) {
			l.errorf(id.Pos(), "ask.Elicit[%s]: a form is flat; this type contains itself", l.typeString(t))
		}
		if len(l.diags) > before {
			continue
		}
		out.Forms = append(out.Forms, model.FormType{Name: name, Type: named, Pos: l.fset.Position(id.Pos())})
	}
}

// hasOwnForm reports whether *n has the methods of ask.Form: its author
// wrote its schema and reader, and keelgen leaves it alone.
func hasOwnForm(n *types.Named) bool {
	ms := types.NewMethodSet(types.NewPointer(n))
	return ms.Lookup(n.Obj().Pkg(), "ElicitSchema") != nil && ms.Lookup(n.Obj().Pkg(), "ReadElicit") != nil
}
