package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

// The keywords MCP's restricted form schema (elicitation/create's
// requestedSchema) allows: at its root, and on each member.
var (
	formRootKeywords   = []string{"type", "properties", "required", "additionalProperties", "description"}
	formMemberKeywords = schemamodel.With(func(r schemamodel.Rule) bool { return r.Form })
	formMemberTypes    = []string{"string", "number", "integer", "boolean"}
	formFormats        = []string{"email", "uri", "date", "date-time"}
)

// forms adds each form's reflected schema to out under its FormKey, and
// returns a diagnostic, at the call that asks for it, for each form MCP's
// restricted schema cannot carry.
func forms(pkg *model.Package, pairs map[string][2]json.RawMessage, out map[string]model.Schemas) []model.Diagnostic {
	var diags []model.Diagnostic
	for _, f := range pkg.Forms {
		doc := []byte(pairs[model.FormKey(f)][0])
		if problem := formProblem(doc); problem != "" {
			diags = append(diags, model.Diagnostic{Pos: f.Pos, Message: fmt.Sprintf("ask.Elicit[%s]: %s", f.Type.Obj().Name(), problem)})
			continue
		}
		formatted, err := format(doc)
		if err != nil {
			diags = append(diags, model.Diagnostic{Pos: f.Pos, Message: fmt.Sprintf("ask.Elicit[%s]: the reflected schema does not read: %v", f.Type.Obj().Name(), err)})
			continue
		}
		out[model.FormKey(f)] = model.Schemas{Input: formatted}
	}
	model.SortDiagnostics(diags)
	return diags
}

// formProblem says why doc is not a form MCP can show, or "".
func formProblem(doc []byte) string {
	root, err := schemamodel.Parse(doc)
	if err != nil {
		return "the reflected schema does not read: " + err.Error()
	}
	if k := outside(root, formRootKeywords); k != "" {
		return fmt.Sprintf("a form's schema has %s, which MCP's form schema cannot carry", k)
	}
	if len(root.Properties) == 0 {
		return "a form has at least one member, each a string, number, integer or boolean"
	}
	for _, p := range root.Properties {
		m := p.Schema
		if len(m.Type) != 1 || !slices.Contains(formMemberTypes, m.Type[0]) {
			return fmt.Sprintf("member %q is %s; a form's members are strings, numbers, integers and booleans (an array, an object or a union is a tool's argument, not a form's)", p.Name, describe(m.Type))
		}
		if k := outside(m, formMemberKeywords); k != "" {
			return fmt.Sprintf("member %q has %s, which MCP's form members cannot carry (they carry %s)", p.Name, k, strings.Join(slices.DeleteFunc(slices.Clone(formMemberKeywords), func(k string) bool { return k == "type" }), ", "))
		}
		if m.Enum != nil && m.Type[0] != "string" {
			return fmt.Sprintf("member %q has an enum of %ss; MCP's forms choose among strings only", p.Name, m.Type[0])
		}
		if m.Format != "" && !slices.Contains(formFormats, m.Format) {
			return fmt.Sprintf("member %q has format %q; MCP's forms know %s", p.Name, m.Format, strings.Join(formFormats, ", "))
		}
	}
	return ""
}

// outside names the first keyword of s, in order, that allowed lacks.
func outside(s *schemamodel.Schema, allowed []string) string {
	for _, k := range s.Keywords() {
		if !slices.Contains(allowed, k) {
			return k
		}
	}
	return ""
}

// describe names a member's JSON type as the problem says it.
func describe(t schemamodel.Types) string {
	switch {
	case len(t) == 0:
		return "of no one type"
	case len(t) > 1:
		return "a union of " + strings.Join(t, ", ")
	case strings.ContainsAny(t[0][:min(1, len(t[0]))], "aeiou"):
		return "an " + t[0]
	}
	return "a " + t[0]
}
