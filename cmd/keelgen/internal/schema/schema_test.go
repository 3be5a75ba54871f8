package schema

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// The design's schema shape: an object at the root, every type inlined.
func TestCheckRoot(t *testing.T) {
	for doc, want := range map[string]string{
		`{"type":"object","properties":{"a":{"type":["string","null"]}}}`: "",
		`{"type":"string"}`:                                   `root type "string"`,
		`{"type":["object","null"]}`:                          `root type ["object","null"]`,
		`{"type":"object","$defs":{}}`:                        "$ref",
		`{"type":"object","properties":{"a":{"$ref":"#/x"}}}`: "$ref",
		`[]`: "not a JSON Schema object",
	} {
		got := checkRoot([]byte(doc), false)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
}

// Schemas are written indented, newline-terminated, with <, > and & as
// written (the reflector escapes them for HTML).
func TestFormat(t *testing.T) {
	got, err := format([]byte(`{"type":"string","pattern":"\u003ca\u0026b\u003e"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"type\": \"string\",\n  \"pattern\": \"<a&b>\"\n}\n"; string(got) != want {
		t.Fatalf("format gave\n%s\nwant\n%s", got, want)
	}
}

// No import of the program can take one of its own package-level names:
// jennifer names every import in lower case, and each of the program's
// names has a capital letter (a handler package named tools, enums or
// comments once collided with the program's variables).
func TestProgramNamesCannotClashWithImports(t *testing.T) {
	src, err := program(&model.Package{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("the program does not parse: %v\n%s", err, src)
	}
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names = append(names, d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	if len(names) < 5 {
		t.Fatalf("found only %v in the program", names)
	}
	for _, name := range names {
		if name != "main" && strings.ToLower(name) == name {
			t.Errorf("the program declares %q, which an import of a package of that name would clash with", name)
		}
	}
}
