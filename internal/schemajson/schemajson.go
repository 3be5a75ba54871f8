// Package schemajson holds what the provider adapters share: reading a
// schema as a generic document, and the result JSON a model reads.
package schemajson

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

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

// MarshalInOrder encodes doc, a transformed copy of the schema orig, with
// every object's members in orig's order (a provider form keeps the
// author's property order, which a model generates in); members orig did
// not have follow, sorted. Maps alone would sort everything.
func MarshalInOrder(doc map[string]any, orig []byte) (json.RawMessage, error) {
	order, err := KeyOrder(orig)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	var write func(v any, ptr jsontext.Pointer) error
	write = func(v any, ptr jsontext.Pointer) error {
		switch v := v.(type) {
		case map[string]any:
			if err := enc.WriteToken(jsontext.BeginObject); err != nil {
				return err
			}
			var names []string
			for _, n := range order[string(ptr)] {
				if _, ok := v[n]; ok {
					names = append(names, n)
				}
			}
			for _, n := range slices.Sorted(maps.Keys(v)) {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
			for _, n := range names {
				if err := enc.WriteToken(jsontext.String(n)); err != nil {
					return err
				}
				if err := write(v[n], ptr.AppendToken(n)); err != nil {
					return err
				}
			}
			return enc.WriteToken(jsontext.EndObject)
		case []any:
			if err := enc.WriteToken(jsontext.BeginArray); err != nil {
				return err
			}
			for i, x := range v {
				if err := write(x, ptr.AppendToken(strconv.Itoa(i))); err != nil {
					return err
				}
			}
			return enc.WriteToken(jsontext.EndArray)
		}
		b, err := jsonv2.Marshal(v)
		if err != nil {
			return err
		}
		return enc.WriteValue(b)
	}
	if err := write(doc, ""); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// KeyOrder reads the member names of every object in a JSON document, in
// the order written, by the object's JSON Pointer ("" for the root).
func KeyOrder(orig []byte) (map[string][]string, error) {
	order := map[string][]string{} // JSON Pointer of an object in orig → its member names
	dec := jsontext.NewDecoder(bytes.NewReader(orig))
	var walk func(ptr jsontext.Pointer) error
	walk = func(ptr jsontext.Pointer) error {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch tok.Kind() {
		case '{':
			var names []string
			for dec.PeekKind() != '}' {
				name, err := dec.ReadToken()
				if err != nil {
					return err
				}
				n := name.String()
				names = append(names, n)
				if err := walk(ptr.AppendToken(n)); err != nil {
					return err
				}
			}
			order[string(ptr)] = names
			_, err = dec.ReadToken()
			return err
		case '[':
			for i := 0; dec.PeekKind() != ']'; i++ {
				if err := walk(ptr.AppendToken(strconv.Itoa(i))); err != nil {
					return err
				}
			}
			_, err = dec.ReadToken()
			return err
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	return order, nil
}
