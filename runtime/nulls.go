package runtime

import "github.com/keelgen/keel/internal/schemamodel"

// dropOptionalNulls removes, from arguments parsed for the validator, each
// member that is null where the schema makes it optional and does not allow
// null: models send null for "unset", and keel reads it as absent, on the
// hand-bound path as the generated readers do. It follows properties, items,
// additionalProperties and the alternatives of anyOf and oneOf (a member
// optional in any alternative), and a $ref to the root's $defs (a recursive
// type, as deep as the arguments go, which the depth cap bounds); it changes
// nothing else.
func dropOptionalNulls(doc any, root *schemamodel.Schema) {
	nullWalk{schemamodel.DefsOf(root)}.drop(doc, root, nil)
}

type nullWalk struct{ defs schemamodel.Defs }

// drop walks doc by s; on is the schemas already applied to this very value
// through alternatives, each once: a hand-written schema may refer to
// itself without descending ({"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"}]}}}).
func (w nullWalk) drop(doc any, s *schemamodel.Schema, on map[*schemamodel.Schema]bool) {
	s = w.defs.Of(s)
	if !s.IsObject() || on[s] {
		return
	}
	switch v := doc.(type) {
	case map[string]any:
		// By the schema's properties, each looked up among the call's
		// members: the work follows the schema, not a call's undeclared
		// members (unless additionalProperties gives them a schema).
		for _, p := range s.Properties {
			member, sent := v[p.Name]
			switch {
			case !sent:
			case member == nil && !s.IsRequired(p.Name) && !w.defs.Of(p.Schema).AllowsNull():
				delete(v, p.Name)
			default:
				w.drop(member, p.Schema, nil)
			}
		}
		if s.AdditionalProperties.IsObject() {
			for name, member := range v {
				if s.Property(name) == nil {
					w.drop(member, s.AdditionalProperties, nil)
				}
			}
		}
	case []any:
		for _, item := range v {
			w.drop(item, s.Items, nil)
		}
	}
	if len(s.AnyOf)+len(s.OneOf) == 0 {
		return
	}
	if on == nil {
		on = map[*schemamodel.Schema]bool{}
	}
	on[s] = true
	for _, alts := range [][]*schemamodel.Schema{s.AnyOf, s.OneOf} {
		for _, alt := range alts {
			w.drop(doc, alt, on)
		}
	}
}
