package gen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/gen"
	"github.com/keelgen/keel/cmd/keelgen/internal/load"
	"github.com/keelgen/keel/internal/testing/testmod"
	"github.com/keelgen/keel/internal/testing/txtartest"
)

// The fast tests' cases share two modules, each read by one go/packages
// call and reflected by one schema program (gen.Shared): keel's own, for
// the golden packages under testdata, and a test module made once, with
// every txtar case and inline package as a package of its own:
//
//	diag/NAME/...       testdata/diag/NAME.txtar, the package at the case's root
//	feature/NAME/h/...  testdata/feature/NAME.txtar, its h.go the package h
//	contract/NAME/old/h testdata/contract/NAME.txtar's old.go, and new/h its new.go
//	inline/TEST/...     inlineCases[TEST]
//
// A case's package path names its place (example.com/user/diag/NAME), as
// its source does where it names one. The tests that run keelgen as a
// user does, once per module and command, are the end-to-end ones.

// keelModule is keel's own module's cases: each golden case, and the
// golden package mixed/in alone.
var keelModule = sync.OnceValues(func() (*gen.Shared, error) {
	dirs, err := filepath.Glob("testdata/golden/*")
	if err != nil {
		return nil, err
	}
	runs := []load.Run{{Dir: "testdata/golden/mixed/in"}, {Dir: "testdata/stability/before"}, {Dir: "testdata/stability/after"}}
	for _, dir := range dirs {
		runs = append(runs, load.Run{Dir: dir, Patterns: []string{"./in/..."}})
	}
	return gen.Share(runs)
})

// testModuleDir is the shared test module's directory, removed by TestMain.
var testModuleDir string

// testModule makes the shared test module and reads every case of it.
var testModule = sync.OnceValues(func() (*gen.Shared, error) {
	dir, err := os.MkdirTemp("", "keelgen-cases-")
	if err != nil {
		return nil, err
	}
	testModuleDir = dir
	root, err := testmod.RootDir()
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	var runs []load.Run
	add := func(place string, sections map[string]string, patterns ...string) {
		for name, data := range sections {
			if name != "want" {
				files[place+"/"+name] = data
			}
		}
		runs = append(runs, load.Run{Dir: filepath.Join(dir, filepath.FromSlash(place)), Patterns: patterns})
	}
	for _, kind := range []struct{ name, pkg string }{{"diag", ""}, {"feature", "h"}} {
		cases, err := txtartest.All("testdata/" + kind.name + "/*.txtar")
		if err != nil {
			return nil, err
		}
		for _, name := range slices.Sorted(maps.Keys(cases)) { // one order, one program: a second run's is cached
			add(path.Join(kind.name, name, kind.pkg), cases[name], ".")
		}
	}
	contracts, err := txtartest.All("testdata/contract/*.txtar")
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(contracts)) {
		for _, side := range []string{"old", "new"} {
			add(path.Join("contract", name, side), map[string]string{"h/h.go": contracts[name][side+".go"]}, "./h")
		}
	}
	for _, test := range slices.Sorted(maps.Keys(inlineCases)) {
		pkg, _, _ := strings.Cut(firstKey(inlineCases[test]), "/")
		add("inline/"+test, inlineCases[test], "./"+pkg)
	}
	if err := testmod.Make(root, dir, testmod.Path, files); err != nil {
		return nil, err
	}
	return gen.Share(runs)
})

// caseDir is the directory of case kind/name in the shared test module,
// and the module's Shared, for Config.
func caseDir(t *testing.T, kind, name string) (string, *gen.Shared) {
	t.Helper()
	shared, err := testModule()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(testModuleDir, kind, name), shared
}

// golden is keelModule's Shared.
func golden(t *testing.T) *gen.Shared {
	t.Helper()
	shared, err := keelModule()
	if err != nil {
		t.Fatal(err)
	}
	return shared
}

// inline is the directory of a test's inline package (inlineCases).
func inline(t *testing.T) (string, *gen.Shared) {
	t.Helper()
	if _, ok := inlineCases[t.Name()]; !ok {
		t.Fatalf("%s has no inline package", t.Name())
	}
	return caseDir(t, "inline", t.Name())
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

// Every test of the fast group runs its cases on a shared module: a
// gen.Config without Shared starts the go command for its own load and
// schema program, which is what made these tests slow. A test that runs
// go commands as a user does is end-to-end (testmod.EndToEnd).
func TestFastCasesShareTheirModule(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != "gen_test" {
			continue // package gen's own tests run the real stages on purpose (progress_test.go)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Test") || calls(fn.Body, "testmod", "EndToEnd") {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if !ok || !isSelector(lit.Type, "gen", "Config") {
					return true
				}
				checked++
				for _, e := range lit.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Shared") {
						return true
					}
				}
				t.Errorf("%s: %s's gen.Config has no Shared: a fast test runs on a shared module (or is end-to-end)", fset.Position(lit.Pos()), fn.Name.Name)
				return true
			})
		}
	}
	if checked < 10 {
		t.Fatalf("only %d gen.Config literals found in the fast tests", checked)
	}
}

func calls(body *ast.BlockStmt, pkg, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && isSelector(c.Fun, pkg, name) {
			found = true
		}
		return !found
	})
	return found
}

func isSelector(e ast.Expr, pkg, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(s.X, pkg) && s.Sel.Name == name
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
