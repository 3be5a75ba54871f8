package schemamodel

import "testing"

// The rules hold together: one row a keyword; a form told to say a
// keyword in words has its words; no keyword is both checked and an
// annotation; a tag is read only on JSON types.
func TestRulesHoldTogether(t *testing.T) {
	seen := map[string]bool{}
	types := map[string]bool{"string": true, "number": true, "integer": true, "array": true, "boolean": true, "object": true}
	for _, r := range rules {
		if seen[r.Name] {
			t.Errorf("%s has two rows", r.Name)
		}
		seen[r.Name] = true
		if (r.OpenAI == StrictWords || r.Anthropic == StrictWords || r.Gemini == GeminiWords) && r.Bound.Words == "" {
			t.Errorf("%s is said in words by a form, and has none", r.Name)
		}
		if r.Checked && IsAnnotation(r.Name) {
			t.Errorf("%s is checked and an annotation", r.Name)
		}
		for _, typ := range r.Tags {
			if !types[typ] {
				t.Errorf("%s is read from a tag on %q, no JSON type", r.Name, typ)
			}
		}
	}
	if got := Said("maxItems", "1"); got != "at most 1 item" {
		t.Errorf("Said(maxItems, 1) = %q", got)
	}
	if got := Said("minLength", "3"); got != "at least 3 characters" {
		t.Errorf("Said(minLength, 3) = %q", got)
	}
	if got := Said("multipleOf", "0.5"); got != "a multiple of 0.5" {
		t.Errorf("Said(multipleOf, 0.5) = %q", got)
	}
	if got := Said("pattern", "x"); got != "" {
		t.Errorf("Said(pattern, x) = %q, no bound", got)
	}
}
