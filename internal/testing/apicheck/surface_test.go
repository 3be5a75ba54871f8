package apicheck

import (
	"flag"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/keelgen/keel/internal/testing/testmod"
)

var update = flag.Bool("update", false, "rewrite testdata/surface/*.txt from the packages as they are")

// public are the packages whose exported surface a golden holds.
var public = []string{
	"cedarpolicy", "keelotel", "mcpserver", "mcpserver/approvalstore", "mcpserver/oidcverify", "mcpserver/taskclient", "mcpserver/taskstore", "memstore",
	"provider/anthropic", "provider/bedrock", "provider/gemini", "provider/ollama", "provider/openai",
	"redisapprovals", "redisrate", "redisreplay", "redistasks", "redistest", "runtime", "runtime/answercall", "runtime/approvecall", "runtime/ask", "runtime/grant", "runtime/report", "runtime/resultjson",
	"runtime/keeltest", "runtime/keeltest/doortest", "runtime/keeltest/frameworktest", "runtime/wire",
}

// Each public package's exported surface (every exported name, its
// signature, a struct's exported fields, a type's exported methods) is a
// committed golden, testdata/surface/<package>.txt: a new public name, or a
// changed signature, is a reviewed diff. go test ./internal/testing/apicheck
// -update rewrites them.
func TestPublicSurface(t *testing.T) {
	root := testmod.Root(t)
	var patterns []string
	for _, p := range public {
		patterns = append(patterns, "./"+p)
	}
	pkgs, err := packages.Load(&packages.Config{Dir: root, Mode: packages.NeedName | packages.NeedTypes}, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != len(public) {
		t.Fatalf("loaded %d packages of %d", len(pkgs), len(public))
	}
	all, err := packages.Load(&packages.Config{Dir: root, Mode: packages.NeedName}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.PkgPath, "github.com/keelgen/keel"), "/")
		first, _, _ := strings.Cut(rel, "/")
		if rel != "" && p.Name != "main" && !slices.Contains([]string{"internal", "cmd", "example", "generated", "benchmarks", "adapters"}, first) &&
			!strings.Contains(rel, "/internal/") && !slices.Contains(public, rel) {
			t.Errorf("the public package %s has no surface golden: add it to public", rel)
		}
	}
	for _, pkg := range pkgs {
		if len(pkg.Errors) > 0 {
			t.Fatalf("%s: %v", pkg.PkgPath, pkg.Errors)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg.PkgPath, "github.com/keelgen/keel"), "/")
		got := surface(pkg.Types)
		path := filepath.Join("testdata", "surface", strings.ReplaceAll(rel, "/", "_")+".txt")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no golden (run go test ./internal/testing/apicheck -update and review it): %v", rel, err)
			continue
		}
		if got != string(want) {
			t.Errorf("%s: the exported surface changed; review it and run go test ./internal/testing/apicheck -update:\n%s", rel, lineDiff(string(want), got))
		}
	}
}

// surface lists pkg's exported names, one line each, sorted.
func surface(pkg *types.Package) string {
	qual := func(other *types.Package) string { // by name: redis.UniversalClient
		if other == pkg {
			return ""
		}
		return other.Name()
	}
	var lines []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.TypeName:
			lines = append(lines, typeLines(o, qual)...)
		default:
			lines = append(lines, types.ObjectString(obj, qual))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// typeLines is a type's declaration (a struct or interface by kind only),
// its exported fields and its exported methods.
func typeLines(o *types.TypeName, qual types.Qualifier) []string {
	name := o.Name()
	under := o.Type().Underlying()
	decl := "type " + name + " " + types.TypeString(under, qual)
	switch under.(type) {
	case *types.Struct:
		decl = "type " + name + " struct"
	case *types.Interface:
		decl = "type " + name + " interface"
	}
	if o.IsAlias() {
		decl = "type " + name + " = " + types.TypeString(o.Type(), qual)
	}
	out := []string{decl}
	if s, ok := under.(*types.Struct); ok && !o.IsAlias() {
		for i := range s.NumFields() {
			if f := s.Field(i); f.Exported() {
				out = append(out, fmt.Sprintf("field %s.%s %s", name, f.Name(), types.TypeString(f.Type(), qual)))
			}
		}
	}
	if it, ok := under.(*types.Interface); ok {
		for i := range it.NumMethods() {
			if m := it.Method(i); m.Exported() {
				out = append(out, fmt.Sprintf("method %s.%s%s", name, m.Name(), strings.TrimPrefix(types.TypeString(m.Type(), qual), "func")))
			}
		}
	}
	if named, ok := o.Type().(*types.Named); ok && !o.IsAlias() {
		for i := range named.NumMethods() {
			if m := named.Method(i); m.Exported() {
				out = append(out, "method "+types.ObjectString(m, qual))
			}
		}
	}
	return out
}

// lineDiff shows the lines only one side has.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if l != "" && !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if l != "" && !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
