package runtime

import "slices"

// dropOptionalNulls removes, from arguments parsed for the validator, each
// member that is null where the schema makes it optional and does not allow
// null: models send null for "unset", and keel reads it as absent, on the
// hand-bound path as the generated readers do. It follows properties, items,
// additionalProperties and the alternatives of anyOf and oneOf (a member
// optional in any alternative), and changes nothing else.
func dropOptionalNulls(doc, schema any) {
	s, ok := schema.(map[string]any)
	if !ok {
		return
	}
	switch v := doc.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		required, _ := s["required"].([]any)
		for name, member := range v {
			sub, declared := props[name]
			if member == nil && declared && !slices.Contains(required, any(name)) && !allowsNull(sub) {
				delete(v, name)
				continue
			}
			if !declared {
				sub = s["additionalProperties"]
			}
			dropOptionalNulls(member, sub)
		}
	case []any:
		for _, item := range v {
			dropOptionalNulls(item, s["items"])
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts, _ := s[kw].([]any)
		for _, alt := range alts {
			dropOptionalNulls(doc, alt)
		}
	}
}

// allowsNull reports whether a schema accepts null by its type, enum or
// const, or has no type at all.
func allowsNull(schema any) bool {
	s, ok := schema.(map[string]any)
	if !ok {
		return schema != false
	}
	switch t := s["type"].(type) {
	case string:
		return t == "null"
	case []any:
		return slices.Contains(t, any("null"))
	}
	if enum, ok := s["enum"].([]any); ok {
		return slices.Contains(enum, nil)
	}
	if c, ok := s["const"]; ok {
		return c == nil
	}
	return true
}
