package mcpserver

import (
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemamodel"
)

// mcpInputSchema is a tool's input schema as keel lists it over MCP:
// keel's own, but with each list of types (a wire.Nullable's
// ["string","null"], a //keel:union's) written as an anyOf of one type
// each, which accepts the same values. The official Go client (go-sdk
// v1.8.0) reads a property's type as one string: a list anywhere among a
// tool's properties made it drop every x-mcp-header annotation of the
// tool, so it sent none of the tool's Mcp-Param headers and keel refused
// each call (-32020). A schema already holding an anyOf keeps its list.
// Read once per tool, when the server is made.
func mcpInputSchema(raw json.RawMessage) json.RawMessage {
	s, err := schemamodel.Parse(raw)
	if err != nil {
		return raw
	}
	changed := false
	s.Walk(func(sub *schemamodel.Schema, _ jsontext.Pointer) {
		if len(sub.Type) < 2 || sub.AnyOf != nil {
			return
		}
		for _, t := range sub.Type {
			sub.AnyOf = append(sub.AnyOf, &schemamodel.Schema{Type: schemamodel.Types{t}})
		}
		sub.Type = nil
		changed = true
	})
	if !changed {
		return raw
	}
	out, err := s.MarshalJSON()
	if err != nil {
		return raw
	}
	return out
}
