// Package schemajson holds what the provider adapters share: reading a
// schema as a generic document, and the result JSON a model reads.
package schemajson

import (
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/keelgen/keel/runtime"
)

// Doc parses a schema into a generic document (objects as map[string]any).
func Doc(schema []byte) (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// Marshal encodes a transformed schema document.
func Marshal(doc map[string]any) (json.RawMessage, error) {
	return jsonv2.Marshal(doc, jsonv2.Deterministic(true))
}

// ResultContent is what a model reads back for any result: the ToolResult
// JSON, so a failed result carries its stable code.
func ResultContent(r runtime.ToolResult) string {
	b, err := json.Marshal(r)
	if err != nil { // unreachable: every field of a ToolResult encodes
		return `{"ok":false,"error":{"code":"tool_internal_error","message":"The result could not be encoded."}}`
	}
	return string(b)
}

// Properties returns a schema object's properties and required set.
func Properties(doc map[string]any) (map[string]any, map[string]bool) {
	props, _ := doc["properties"].(map[string]any)
	req := map[string]bool{}
	if list, ok := doc["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	return props, req
}

// Strings is the set of strings a keyword's value names: one ("type":
// "string") or a list ("type": ["string", "null"], "required"); empty for
// anything else, an absent keyword included. The one reading of a "type as
// a set" every package that walks schemas shares.
func Strings(v any) map[string]bool {
	out := map[string]bool{}
	switch v := v.(type) {
	case string:
		out[v] = true
	case []any:
		for _, s := range v {
			if s, ok := s.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}
