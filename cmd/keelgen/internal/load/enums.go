package load

import (
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// mainModule is the path of the module the handler packages belong to, or
// "" when go/packages does not say (GOPATH mode).
func mainModule(pkgs []*packages.Package) string {
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Main {
			return p.Module.Path
		}
	}
	return ""
}

// enums finds the Go a user already writes for a closed set of values: a
// named string or integer type declared in the user's module whose package
// declares exported constants of exactly that type. Each is an enum of
// those values, in declaration order, wherever a tool uses the type. Types
// from outside the module (time.Duration and its constants) and types with
// a JSONSchema method of their own are left alone.
func enums(tools []*model.Tool, forms []model.FormType, module string, fset *token.FileSet) []model.Enum {
	if module == "" {
		return nil
	}
	var out []model.Enum
	model.WalkTypes(tools, forms, func(n *types.Named) bool {
		if e, ok := enumOf(n, module, fset); ok {
			out = append(out, e)
			return false
		}
		return true
	})
	slices.SortFunc(out, func(a, b model.Enum) int {
		return strings.Compare(a.Type.Obj().Pkg().Path()+"."+a.Type.Obj().Name(), b.Type.Obj().Pkg().Path()+"."+b.Type.Obj().Name())
	})
	return out
}

func enumOf(n *types.Named, module string, fset *token.FileSet) (model.Enum, bool) {
	obj := n.Obj()
	pkg := obj.Pkg()
	if pkg == nil || !obj.Exported() || n.TypeParams() != nil ||
		(pkg.Path() != module && !strings.HasPrefix(pkg.Path(), module+"/")) ||
		hasSchemaMethod(n) || model.HasMethod(n, "JSONSchemaExtend") {
		return model.Enum{}, false
	}
	b, ok := n.Underlying().(*types.Basic)
	if !ok || b.Info()&(types.IsString|types.IsInteger) == 0 {
		return model.Enum{}, false
	}
	var consts []*types.Const
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		c, ok := scope.Lookup(name).(*types.Const)
		if ok && c.Exported() && types.Identical(c.Type(), n) {
			consts = append(consts, c)
		}
	}
	if len(consts) == 0 {
		return model.Enum{}, false
	}
	slices.SortStableFunc(consts, func(a, b *types.Const) int { return positionCompare(fset, a.Pos(), b.Pos()) })
	e := model.Enum{Type: n}
	for _, c := range consts {
		if !slices.ContainsFunc(e.Values, func(v constant.Value) bool { return constant.Compare(v, token.EQL, c.Val()) }) {
			e.Values = append(e.Values, c.Val())
		}
	}
	return e, true
}

// positionCompare orders declarations by file name, then offset: the order
// a reader meets them, whatever order the package's files were loaded in.
func positionCompare(fset *token.FileSet, a, b token.Pos) int {
	pa, pb := fset.Position(a), fset.Position(b)
	if c := strings.Compare(pa.Filename, pb.Filename); c != 0 {
		return c
	}
	return pa.Offset - pb.Offset
}
