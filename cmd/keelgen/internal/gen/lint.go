package gen

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

// lint reports what the model reads that could be better: a member of an
// input or output schema without a description (for a plain parameter: no
// //keel:param), and a Go name of the handler package in a description
// where the model knows another name or none.
func lint(pkg *model.Package, schemas map[string]model.Schemas) []model.Diagnostic {
	var out []model.Diagnostic
	warn := func(t *model.Tool, format string, args ...any) {
		out = append(out, model.Diagnostic{Pos: t.Pos, Message: "warning: " + t.Name + ": " + fmt.Sprintf(format, args...)})
	}
	// Each description is split into words once and each word looked up in
	// a set: the work follows the text, not tools × identifiers.
	exported := make(map[string]int, len(pkg.Exported))
	for i, ident := range pkg.Exported {
		exported[ident] = i
	}
	for _, t := range pkg.Tools {
		said := words(t.Description)
		params := map[string]bool{}
		for _, p := range t.Params {
			params[p.JSONName] = true
			if p.Description == "" {
				warn(t, "parameter %s has no description for the model; add //keel:param %s <what it is>", p.JSONName, p.Name)
			}
			if p.Name != p.JSONName && said[p.Name] {
				warn(t, "the description names parameter %s, which the model knows as %s", p.Name, p.JSONName)
			}
		}
		for _, side := range []struct {
			name string
			doc  []byte
		}{{"input", schemas[t.Name].Input}, {"output", schemas[t.Name].Output}} {
			for _, ptr := range undescribed(side.doc) {
				if side.name == "input" && t.Form == model.PlainParams && params[strings.TrimPrefix(ptr, "/")] {
					continue // said above, with its fix
				}
				warn(t, "%s member %s has no description for the model; give its field a doc comment", side.name, ptr)
			}
			for _, d := range described(side.doc) {
				if at, ok := pkg.KeptNames[d.text]; ok {
					warn(t, "%s member %s: its doc comment (%s) starts with the field's Go name and is kept as written, since the next word does not read as a verb about it; the model reads %q (to have the name dropped, write \"<Name> is ...\" or \"<Name> returns ...\")",
						side.name, d.ptr, at, d.text)
				}
			}
		}
		var named []int // indices into pkg.Exported: warnings in its order
		for w := range said {
			if i, ok := exported[w]; ok && w != t.Func {
				named = append(named, i)
			}
		}
		slices.Sort(named)
		for _, i := range named {
			warn(t, "the description names the Go identifier %s, which the model does not know", pkg.Exported[i])
		}
	}
	return out
}

// describedMember is a property's JSON Pointer and its description.
type describedMember struct{ ptr, text string }

// described lists the properties of schema, at any depth, that have a
// description.
func described(schema []byte) []describedMember {
	var out []describedMember
	walkMembers(schema, false, func(ptr string, p *schemamodel.Schema, _ bool) {
		if p.IsObject() && p.Description != "" {
			out = append(out, describedMember{ptr, p.Description})
		}
	})
	return out
}

// undescribed lists the JSON Pointers of the properties of schema, at any
// depth, that have no description.
func undescribed(schema []byte) []string {
	var out []string
	walkMembers(schema, false, func(ptr string, p *schemamodel.Schema, _ bool) {
		if p.IsObject() && p.Description == "" {
			out = append(out, ptr)
		}
	})
	return out
}

// walkMembers calls f with every property of the object schemas in
// schema, at any depth, by name within an object: its pointer, its schema,
// and whether its object requires it. refs follows a $ref into $defs
// (a recursive type's members once along a path); without it a $ref is
// where the walk stops.
func walkMembers(schema []byte, refs bool, f func(ptr string, p *schemamodel.Schema, required bool)) {
	doc, err := schemamodel.Parse(schema)
	if err != nil {
		return
	}
	defs := schemamodel.DefsOf(doc)
	inside := map[*schemamodel.Schema]bool{}
	var walk func(s *schemamodel.Schema, ptr jsontext.Pointer)
	walk = func(s *schemamodel.Schema, ptr jsontext.Pointer) {
		if name, ok := schemamodel.Ref(s); ok && refs {
			s = defs.Get(name)
		}
		if !s.IsObject() || inside[s] {
			return
		}
		inside[s] = true
		for _, name := range slices.Sorted(slices.Values(s.PropertyNames())) {
			p := s.Property(name)
			f(string(ptr.AppendToken(name)), p, slices.Contains(s.Required, name))
			walk(p, ptr.AppendToken(name))
		}
		walk(s.Items, ptr.AppendToken("0"))
		walk(s.AdditionalProperties, ptr.AppendToken("*"))
		inside[s] = false
	}
	walk(doc, "")
}

// words is the set of whole words of text: the longest runs of letters,
// digits and underscores, the characters of a Go identifier.
func words(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		out[w] = true
	}
	return out
}
