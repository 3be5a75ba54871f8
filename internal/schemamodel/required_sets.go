package schemamodel

// RequiredSets reads alternatives that are each only a set of required
// members (and annotations): their sets, and true; false for any other.
func RequiredSets(alts []*Schema) ([][]string, bool) {
	if len(alts) == 0 {
		return nil, false
	}
	var sets [][]string
	for _, alt := range alts {
		if !alt.IsObject() || len(alt.Required) == 0 {
			return nil, false
		}
		for _, k := range alt.Keywords() {
			if k != "required" && !IsAnnotation(k) {
				return nil, false
			}
		}
		sets = append(sets, alt.Required)
	}
	return sets, true
}
