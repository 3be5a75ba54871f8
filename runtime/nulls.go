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
		for name, member := range v {
			sub := s.Property(name)
			if sub == nil {
				sub = s.AdditionalProperties
			} else if member == nil && !s.IsRequired(name) && !sub.AllowsNull() {
				delete(v, name)
				continue
			}
			dropOptionalNulls(member, sub)
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
