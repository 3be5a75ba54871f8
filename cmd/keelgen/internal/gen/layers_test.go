package gen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The generator's stages import only downward: load and schema know the
// model, not each other; render knows neither; contract knows no stage; the
// shared go/types → jennifer code is below all of them. No exceptions: the
// loader needs no jennifer (HasMethod lives in model), output no render
// (file names live in files), and the generator core no provider adapter
// (the forms -targets checks live in forms).
func TestStagesImportDownward(t *testing.T) {
	const p = "github.com/keelgen/keel/cmd/keelgen/internal/"
	const forms, resultjson = "github.com/keelgen/keel/internal/forms", "github.com/keelgen/keel/runtime/resultjson"
	const jennifer = "github.com/dave/jennifer/jen"
	adapters := []string{"github.com/keelgen/keel/provider/openai", "github.com/keelgen/keel/provider/ollama", "github.com/keelgen/keel/provider/anthropic"}
	stages := []string{"load", "schema", "contract", "render", "gen", "output"}
	forbidden := map[string][]string{
		"files":    append(paths(p, "model", "gocode"), append(paths(p, stages...), forms, resultjson)...),
		"model":    append(paths(p, "gocode", "files"), append(paths(p, stages...), forms, jennifer)...),
		"gocode":   paths(p, stages...),
		"load":     append(paths(p, "schema", "contract", "render", "gen", "output", "gocode"), forms, jennifer),
		"schema":   paths(p, "load", "contract", "render", "gen", "output"),
		"contract": paths(p, "load", "schema", "render", "gen", "output"),
		"render":   paths(p, "load", "schema", "contract", "gen", "output"),
		"output":   paths(p, "load", "schema", "contract", "gen", "render", "gocode"),
		"gen":      adapters,
	}
	args := []string{"list", "-deps=false", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}
	for stage := range forbidden {
		args = append(args, p+stage)
	}
	args = append(args, forms)
	out, err := exec.Command("go", args...).Output() // one go command for every stage
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		bad := forbidden[strings.TrimPrefix(pkg, p)]
		if pkg == forms { // a leaf the runtime's providers share: no stage, no generator helper, not the runtime it serves
			bad = append(paths(p, "model", "gocode", "files"), append(paths(p, stages...), "github.com/keelgen/keel/runtime")...)
		}
		for _, n := range bad {
			if slices.Contains(deps, n) {
				t.Errorf("%s imports %s", pkg, n)
			}
		}
	}
}

func paths(prefix string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// Every package reads a schema through internal/schemamodel's one typed
// model: outside it, no source indexes a generic document by a JSON Schema
// keyword (doc["properties"], s["type"], ...).
func TestSchemasAreReadThroughTheModel(t *testing.T) {
	keywords := map[string]bool{}
	for _, k := range strings.Fields(`type enum const properties required additionalProperties items prefixItems
		minProperties maxProperties minItems maxItems uniqueItems minLength maxLength pattern format minimum maximum
		exclusiveMinimum exclusiveMaximum multipleOf allOf anyOf oneOf not $defs patternProperties`) {
		keywords[k] = true
	}
	root := filepath.Join("..", "..", "..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "schemamodel":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			if ix, ok := n.(*ast.IndexExpr); ok {
				if lit, ok := ix.Index.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if k, _ := strconv.Unquote(lit.Value); keywords[k] {
						t.Errorf("%s: indexes a document by the schema keyword %q; read it through schemamodel", fset.Position(lit.Pos()), k)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d files; the walk no longer reaches the module", files)
	}
}
