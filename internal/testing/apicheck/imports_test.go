package apicheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/keelgen/keel/internal/testing/testmod"
)

const (
	module = "github.com/keelgen/keel/"
	// generator holds keelgen's stages and helpers; the compiler lets only
	// cmd/keelgen import them.
	generator = module + "cmd/keelgen/internal/"
	// leaves are shared by the runtime, the servers and the providers.
	leaves = module + "internal/"
	// testSupport is imported by tests, and by other test support, only.
	testSupport = module + "internal/testing/"
)

// publicKits are test support a user may import too (a door's corpus, a
// framework's scripted conversation, a throwaway redis-server): public, and
// like internal/testing/ imported by tests and test support only.
var publicKits = []string{module + "runtime/keeltest/doortest", module + "runtime/keeltest/frameworktest", module + "redistest"}

func isTestSupport(path string) bool {
	return strings.HasPrefix(path, testSupport) || slices.Contains(publicKits, path)
}

// The import rules of docs/layout.md hold in every package's build (tests
// aside): nothing but test support imports test support; a leaf (internal/,
// test support aside) imports nothing of keel's but other leaves, so the
// runtime imports only leaves that import nothing above it; nothing outside
// cmd/keelgen reaches the generator.
func TestImportRules(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Dir: testmod.Root(t), Mode: packages.NeedName | packages.NeedImports}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	keelImports := map[string][]string{}
	for _, p := range pkgs {
		for imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				keelImports[p.PkgPath] = append(keelImports[p.PkgPath], imp)
			}
		}
	}
	// A leaf the runtime may import: an internal/ package whose keel
	// imports are such leaves too.
	var pure func(path string, seen map[string]bool) bool
	pure = func(path string, seen map[string]bool) bool {
		if !strings.HasPrefix(path, leaves) || strings.HasPrefix(path, testSupport) {
			return false
		}
		if seen[path] {
			return true
		}
		seen[path] = true
		for _, imp := range keelImports[path] {
			if !pure(imp, seen) {
				return false
			}
		}
		return true
	}
	counts := map[string]int{}
	for _, p := range pkgs {
		runtime := p.PkgPath == module+"runtime"
		keelgen := strings.HasPrefix(p.PkgPath, module+"cmd/keelgen")
		for _, imp := range keelImports[p.PkgPath] {
			switch {
			case isTestSupport(imp) && !isTestSupport(p.PkgPath):
				t.Errorf("%s imports %s, test support, outside a test", p.PkgPath, imp)
			case strings.HasPrefix(imp, generator) && !keelgen:
				t.Errorf("%s imports %s, a stage of keelgen's", p.PkgPath, imp)
			case strings.HasPrefix(p.PkgPath, leaves) && !isTestSupport(p.PkgPath) && !strings.HasPrefix(imp, leaves):
				t.Errorf("%s, a leaf, imports %s, which stands above it", p.PkgPath, imp)
			case runtime && strings.HasPrefix(imp, leaves) && !pure(imp, map[string]bool{}):
				t.Errorf("runtime imports %s, which is not a leaf (it imports %v)", imp, keelImports[imp])
			case isTestSupport(imp):
				counts["test support"]++
			case strings.HasPrefix(imp, generator):
				counts["generator"]++
			case runtime && strings.HasPrefix(imp, leaves):
				counts["runtime's leaves"]++
			}
		}
	}
	if len(pkgs) < 50 || counts["test support"] < 5 || counts["generator"] < 10 || counts["runtime's leaves"] < 3 {
		t.Fatalf("loaded %d packages; allowed imports seen: %v; the load missed the tree", len(pkgs), counts)
	}
}

// No other module of the repository (the adapters, the migration example,
// the peer benchmarks) imports keel's internal packages, tests included:
// Go's internal rule goes by import path, so across modules only this test
// holds it, and a released adapter would be bound to one keel's internals.
func TestOtherModulesImportNoInternal(t *testing.T) {
	root := testmod.Root(t)
	fset := token.NewFileSet()
	var modules []string // the other modules' directories, each met before its files
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				modules = append(modules, path+string(filepath.Separator))
			}
			return nil
		}
		inOther := slices.ContainsFunc(modules, func(dir string) bool { return strings.HasPrefix(path, dir) })
		if !strings.HasSuffix(path, ".go") || !inOther {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if strings.HasPrefix(imp, module) && (strings.Contains(imp, "/internal/") || strings.HasSuffix(imp, "/internal")) {
				t.Errorf("%s imports %s: another module may use only keel's public packages", fset.Position(spec.Pos()), imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(modules) < 7 || files < 30 {
		t.Fatalf("walked %d other modules and %d files; the walk missed the tree", len(modules), files)
	}
}
