package forms

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/keelgen/keel/internal/schemamodel"
)

// ollamaKeeps are the keywords Ollama reads, on the root object and on a
// property.
var ollamaKeeps = plainKeeps{
	root:     map[string]bool{"type": true, "properties": true, "required": true, "description": true},
	property: map[string]bool{"type": true, "description": true, "enum": true, "items": true},
}

// novaKeeps are the keywords Amazon Nova models on Bedrock take: the root
// may say only type, properties and required (Nova's documented limit; any
// other keyword is an API error); a property is read as by Ollama.
var novaKeeps = plainKeeps{
	root:     map[string]bool{"type": true, "properties": true, "required": true},
	property: ollamaKeeps.property,
}

// plainKeeps are the keywords a plain form keeps, on the root object and
// on a property; every other constraint moves into the description.
type plainKeeps struct{ root, property map[string]bool }

// OllamaLost lists what Ollama would drop from schema: "incident_id: pattern".
func OllamaLost(schema json.RawMessage) []string {
	_, lost, err := OllamaSafe(schema)
	if err != nil {
		return []string{err.Error()}
	}
	return lost
}

// OllamaSafe keeps what Ollama reads and moves every dropped constraint of a
// property into its description, so the model still reads it.
func OllamaSafe(schema json.RawMessage) (json.RawMessage, []string, error) {
	return plainForm(schema, ollamaKeeps)
}

// NovaPlain is the form for Amazon Nova models on Bedrock, built as
// OllamaSafe is, with Nova's narrower root.
func NovaPlain(schema json.RawMessage) (json.RawMessage, []string, error) {
	return plainForm(schema, novaKeeps)
}

// NovaLost lists what NovaPlain moves out of schema's keywords.
func NovaLost(schema json.RawMessage) []string {
	_, lost, err := NovaPlain(schema)
	if err != nil {
		return []string{err.Error()}
	}
	return lost
}

func plainForm(schema json.RawMessage, keeps plainKeeps) (json.RawMessage, []string, error) {
	schema, _, err := inlineRefs(schema)
	if err != nil {
		return nil, nil, err
	}
	doc, err := schemamodel.Parse(schema)
	if err != nil {
		return nil, nil, err
	}
	// "One of these members" and "this member needs that one" are said in
	// words: in the root's description where the form keeps one, else by
	// the caller in the tool's (RootWords).
	said := slices.Concat(alternativesInWords(doc), dependentsInWords(doc))
	var lost []string
	for _, k := range sorted(doc.Keywords()) {
		if !keeps.root[k] && k != "additionalProperties" { // a closed root is enforced by the executor anyway
			lost = append(lost, "the arguments: "+k)
			doc.Delete(k)
		}
	}
	doc.Delete("additionalProperties")
	for _, name := range sorted(doc.PropertyNames()) {
		p := doc.Property(name)
		if !p.IsObject() {
			continue
		}
		var notes []string
		for _, k := range sorted(p.Keywords()) {
			if keeps.property[k] {
				continue
			}
			lost = append(lost, name+": "+k)
			notes = append(notes, fmt.Sprintf("%s %s", k, p.Keyword(k)))
			p.Delete(k)
		}
		if items := p.Items; items.IsObject() {
			for _, k := range sorted(items.Keywords()) {
				if k != "type" {
					lost = append(lost, name+"[]: "+k)
					notes = append(notes, fmt.Sprintf("items %s %s", k, items.Keyword(k)))
					items.Delete(k)
				}
			}
		}
		sayInDescription(p, notes)
	}
	if keeps.root["description"] {
		sayInDescription(doc, said)
	}
	out, err := doc.MarshalJSON()
	return out, lost, err
}

// RootWords are the rules on a tool's arguments as a whole that a form
// without a root description says in the tool's own ("give exactly one
// of: uid; name"); none when there are none.
func RootWords(schema json.RawMessage) []string {
	doc, err := schemamodel.Parse(schema)
	if err != nil {
		return nil
	}
	return slices.Concat(alternativesInWords(doc), dependentsInWords(doc))
}

func sorted(names []string) []string { return slices.Sorted(slices.Values(names)) }
