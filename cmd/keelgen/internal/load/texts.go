package load

import (
	"fmt"
	"go/types"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"golang.org/x/tools/go/packages"
)

const textPrefix = "//keel:text"

// isTextDirective reports whether a comment line is a //keel:text line.
func isTextDirective(text string) bool { return isKeyword(text, textPrefix) }

// textDirectives reads every package's //keel:text lines, before any tool is
// checked, since a declaration in one file holds for tools in all of them:
//
//	//keel:text github.com/shopspring/decimal.Decimal pattern=^-?[0-9]+(\.[0-9]+)?$
//
// declares that the type's JSON form is its text form (MarshalText,
// UnmarshalText), a string with the given format and pattern. It is how a
// type of another module, which cannot be given a JSONSchema method, is
// described.
func textDirectives(pkgs []*packages.Package) (model.TextTypes, []model.Diagnostic) {
	texts := model.TextTypes{}
	var diags []model.Diagnostic
	for _, pkg := range pkgs {
		for _, f := range pkg.Syntax {
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					if !isTextDirective(c.Text) {
						continue
					}
					pos := pkg.Fset.Position(c.Pos())
					t, problems := parseTextDirective(c.Text)
					t.Pos = pos
					if prev, ok := texts[t.Name]; ok && t.Name != "" {
						problems = append(problems, fmt.Sprintf("%s is declared twice (first on line %d of %s)", t.Name, prev.Pos.Line, filepath.Base(prev.Pos.Filename)))
					}
					for _, p := range problems {
						diags = append(diags, model.Diagnostic{Pos: pos, Message: "//keel:text: " + p})
					}
					if len(problems) == 0 {
						texts[t.Name] = t
					}
				}
			}
		}
	}
	return texts, diags
}

// textName is a type's full name: an import path, a dot, an exported name.
var textName = regexp.MustCompile(`^[^\s.][^\s]*\.[A-Z][A-Za-z0-9_]*$`)

func parseTextDirective(text string) (model.TextType, []string) {
	fields := strings.Fields(text[len(textPrefix):])
	if len(fields) == 0 {
		return model.TextType{}, []string{"name the type, with its import path: //keel:text github.com/shopspring/decimal.Decimal pattern=..."}
	}
	t := model.TextType{Name: fields[0]}
	pairs, problems := keyValues(fields[1:], "")
	if !textName.MatchString(t.Name) || !strings.Contains(t.Name, "/") && strings.Count(t.Name, ".") > 1 {
		problems = append(problems, fmt.Sprintf("%q is not a type's full name; write its import path, a dot and its name, as github.com/shopspring/decimal.Decimal", t.Name))
	}
	for _, kv := range pairs {
		key, value := kv.key, kv.value
		switch {
		case value == "":
			problems = append(problems, fmt.Sprintf("%q is not key=value", key+"="))
		case key == "format":
			t.Format = value
		case key == "pattern":
			t.Pattern = value
			if _, err := regexp.Compile(value); err != nil {
				problems = append(problems, fmt.Sprintf("pattern %q does not compile: %v", value, err))
			}
		default:
			problems = append(problems, fmt.Sprintf("unknown key %q (a //keel:text line takes format= and pattern=)", key))
		}
	}
	return t, problems
}

// checkTextTypes reports a declaration no tool uses, and one whose type has
// no text form for the generated code to read and write.
func checkTextTypes(texts model.TextTypes, tools []*model.Tool, forms []model.FormType) []model.Diagnostic {
	met := map[string]*types.Named{}
	model.WalkTypes(tools, forms, func(n *types.Named) bool {
		if t, ok := texts.Of(n); ok {
			met[t.Name] = n
			return false
		}
		return true
	})
	var diags []model.Diagnostic
	for name, t := range texts {
		n, ok := met[name]
		switch {
		case !ok:
			diags = append(diags, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("//keel:text: no tool's arguments or result use %s; remove the line, or check the import path", name)})
		case !model.HasMethod(n, "MarshalText") || !model.HasMethod(n, "UnmarshalText"):
			diags = append(diags, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("//keel:text: %s has no MarshalText and UnmarshalText methods, which generated code reads and writes it with", name)})
		}
	}
	return diags
}
