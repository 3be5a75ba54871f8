package schemamodel

import "strings"

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

// IsRequiredSets reports whether alts are sets of required members.
func IsRequiredSets(alts []*Schema) bool {
	_, ok := RequiredSets(alts)
	return ok
}

// RequiredSetsInWords is sets as a reader reads them: "uid; org and slug".
func RequiredSetsInWords(sets [][]string) string {
	each := make([]string, len(sets))
	for i, set := range sets {
		each[i] = strings.Join(set, " and ")
	}
	return strings.Join(each, "; ")
}
