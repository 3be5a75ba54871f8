package gen

import (
	"fmt"
	"go/token"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

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
	warnAt := func(pos token.Position, t *model.Tool, format string, args ...any) {
		out = append(out, model.Diagnostic{Pos: pos, Message: "warning: " + t.Name + ": " + fmt.Sprintf(format, args...)})
	}
	warn := func(t *model.Tool, format string, args ...any) { warnAt(t.Pos, t, format, args...) }
	namedFirst := map[token.Position]bool{} // a comment several tools read is named once
	once := func(at token.Position) bool {
		if namedFirst[at] {
			return false
		}
		namedFirst[at] = true
		return true
	}
	// Each description is split into words once and each word looked up in
	// a set: the work follows the text, not tools × identifiers.
	exported := make(map[string]int, len(pkg.Exported))
	for i, ident := range pkg.Exported {
		exported[ident] = i
	}
	for _, t := range pkg.Tools {
		said := words(t.Description)
		for _, at := range pkg.NamedFirst[t.Description] {
			if !once(at) {
				continue
			}
			warnAt(at, t, "its description starts with the handler's Go name %s, which the model does not know and reads as written; %s", t.Func, fixNamedFirst(t.Description, t.Func))
		}
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
				for _, at := range pkg.NamedFirst[d.text] {
					if !once(at) {
						continue
					}
					name, _, _ := strings.Cut(d.text, " ")
					warnAt(at, t, "%s member %s: its description starts with the Go name %s, which the model reads as written; %s",
						side.name, d.ptr, name, fixNamedFirst(d.text, name))
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

// described lists every subschema of schema with a description, at any
// place (the root, members, items, tuples' items, $defs), by pointer.
func described(schema []byte) []describedMember {
	var out []describedMember
	doc, err := schemamodel.Parse(schema)
	if err != nil {
		return nil
	}
	doc.Walk(func(sub *schemamodel.Schema, ptr jsontext.Pointer) {
		if sub.IsObject() && sub.Description != "" {
			out = append(out, describedMember{memberPointer(ptr), sub.Description})
		}
	})
	return out
}

// memberPointer is a schema pointer as the other warnings name a member:
// "/properties/id" as "/id", an array's items as "0", a map's values as
// "*"; the root as "/".
func memberPointer(ptr jsontext.Pointer) string {
	var out jsontext.Pointer
	skip := false
	for tok := range ptr.Tokens() {
		switch {
		case skip:
			skip = false
			out = out.AppendToken(tok)
		case tok == "properties" || tok == "prefixItems" || tok == "$defs":
			skip = true
			if tok == "$defs" {
				out = out.AppendToken(tok)
			}
		case tok == "items":
			out = out.AppendToken("0")
		case tok == "additionalProperties":
			out = out.AppendToken("*")
		default:
			out = out.AppendToken(tok)
		}
	}
	if out == "" {
		return "/"
	}
	return string(out)
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

// fixNamedFirst is the edit -lint suggests for a doc text that starts with
// the Go name it documents (the warning is at the comment): its first
// words, and the same without the name (and an "is" or "are" after it),
// capitalized. The author decides: "Filter notifications to ..." may mean
// the verb.
func fixNamedFirst(text, name string) string {
	rest := strings.TrimPrefix(text, name+" ")
	for _, be := range []string{"is ", "are "} {
		rest = strings.TrimPrefix(rest, be)
	}
	r, size := utf8.DecodeRuneInString(rest)
	start := func(s string) string { // the first words, enough to find the place
		f := strings.Fields(s)
		return strings.Join(f[:min(len(f), 4)], " ")
	}
	return fmt.Sprintf("if %s is its Go name, not a word of the sentence, edit the comment: %q → %q", name, start(text), start(string(unicode.ToUpper(r))+rest[size:]))
}
