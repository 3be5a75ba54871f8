package apicheck

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/keelgen/keel/internal/testmod"
)

// The internal packages by who may import them (docs/layout.md).
var (
	// generator are keelgen's stages and helpers: only keelgen and each
	// other import them.
	generator = []string{"load", "model", "schema", "contract", "render", "output", "gen", "gocode", "files", "signing"}
	// testSupport is imported by tests, and by each other, only.
	testSupport = []string{"testmod", "txtartest", "jsontest", "hostile", "leakcheck", "cputime", "redistest", "oidctest",
		"frameworktest", "contenttest", "doortest"}
)

// The import rules hold in every package's build (tests aside): nothing
// but keelgen imports the generator's stages, and nothing but test support
// (and internal/synth, the scale benchmark's generator) imports test
// support.
func TestImportRules(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Dir: testmod.Root(t), Mode: packages.NeedName | packages.NeedImports}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	const internal = "github.com/keelgen/keel/internal/"
	kind := func(path string) (string, string) {
		rest, ok := strings.CutPrefix(path, internal)
		if !ok {
			return "", ""
		}
		first, _, _ := strings.Cut(rest, "/")
		switch {
		case slices.Contains(generator, first):
			return "generator", first
		case slices.Contains(testSupport, first):
			return "test support", first
		}
		return "", first
	}
	checked, seenRules := 0, map[string]bool{}
	for _, p := range pkgs {
		own, first := kind(p.PkgPath)
		keelgen := strings.HasPrefix(p.PkgPath, "github.com/keelgen/keel/cmd/keelgen")
		for imp := range p.Imports {
			what, _ := kind(imp)
			switch {
			case what == "generator" && own != "generator" && !keelgen:
				t.Errorf("%s imports %s, a stage of keelgen's", p.PkgPath, imp)
			case what == "test support" && own != "test support" && first != "synth":
				t.Errorf("%s imports %s, test support, outside a test", p.PkgPath, imp)
			case what != "":
				seenRules[what] = true // an import the rules allow: the rules see the tree
			}
			checked++
		}
	}
	if checked < 200 || !seenRules["generator"] || !seenRules["test support"] {
		t.Fatalf("checked %d imports (allowed kinds seen: %v); the load missed the tree", checked, seenRules)
	}
}
