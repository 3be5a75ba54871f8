package runtime

import "github.com/keelgen/keel/internal/schemamodel"

// dropOptionalNulls removes, from arguments parsed for the validator, each
// member that is null where the schema makes it optional and does not allow
// null: models send null for "unset", and keel reads it as absent, on the
// hand-bound path as the generated readers do. It follows properties, items,
// additionalProperties and the alternatives of anyOf and oneOf (a member
// optional in any alternative), and changes nothing else.
func dropOptionalNulls(doc any, s *schemamodel.Schema) {
	if !s.IsObject() {
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
			case member == nil && !s.IsRequired(p.Name) && !p.Schema.AllowsNull():
				delete(v, p.Name)
			default:
				dropOptionalNulls(member, p.Schema)
			}
		}
		if s.AdditionalProperties.IsObject() {
			for name, member := range v {
				if s.Property(name) == nil {
					dropOptionalNulls(member, s.AdditionalProperties)
				}
			}
		}
	case []any:
		for _, item := range v {
			dropOptionalNulls(item, s.Items)
		}
	}
	for _, alts := range [][]*schemamodel.Schema{s.AnyOf, s.OneOf} {
		for _, alt := range alts {
			dropOptionalNulls(doc, alt)
		}
	}
}
