package forms_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/forms"
)

// Any schema document goes through every form without a panic; what a
// form writes is JSON.
func FuzzForms(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string","const":"x"},"b":{"anyOf":[{"type":"null"}]}}}`,
		`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}},"minItems":"2"}`,
		`{"properties":{"e":{"enum":[1,null],"uniqueItems":true,"items":[true]},"f":false}}`, `true`, `{"type":7,"required":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		check := func(form string, out json.RawMessage) {
			if out != nil && !jsontext.Value(out).IsValid() {
				t.Fatalf("%s of %s wrote %s, which is not JSON", form, doc, out)
			}
		}
		out, _, _ := forms.OpenAIStrict(doc)
		check("OpenAIStrict", out)
		out, _, _ = forms.AnthropicStrict(doc)
		check("AnthropicStrict", out)
		out, _, _ = forms.OllamaSafe(doc)
		check("OllamaSafe", out)
		out, _, _ = forms.NovaPlain(doc)
		check("NovaPlain", out)
	})
}

// Types that refer to each other are inlined within a bound: five of them,
// each holding all five, would be 5^15 copies at three levels each; the
// form stops at maxInlined and leaves the rest out.
func TestInliningIsBounded(t *testing.T) {
	var defs []string
	for i := range 5 {
		var props []string
		for j := range 5 {
			props = append(props, fmt.Sprintf(`"m%d":{"$ref":"#/$defs/t%d"}`, j, j))
		}
		defs = append(defs, fmt.Sprintf(`"t%d":{"type":"object","properties":{%s}}`, i, strings.Join(props, ",")))
	}
	schema := json.RawMessage(`{"type":"object","properties":{"root":{"$ref":"#/$defs/t0"}},"$defs":{` + strings.Join(defs, ",") + `}}`)
	out, _, err := forms.GeminiParameters(schema)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), `"OBJECT"`); n > forms.MaxInlined+1 || n < 100 {
		t.Fatalf("%d objects inlined (%d bytes)", n, len(out))
	}
}

// Alternatives of required members ("this member or that one") and a
// member's needs reach a strict form as words in the description, so the
// tool stays strict; other alternatives stay as they were. (Gemini's
// parameters say them too: TestGeminiParameters.)
func TestAlternativesInWords(t *testing.T) {
	doc := []byte(`{"type":"object","description":"Names a datasource.",
		"oneOf":[{"required":["uid"],"title":"by_uid"},{"required":["org","slug"]}],
		"anyOf":[{"required":["title"]},{"required":["tags"]}],
		"dependentRequired":{"slug":["org"]},
		"properties":{"uid":{"type":"string"},"org":{"type":"integer"},"slug":{"type":"string"},"title":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},
		"additionalProperties":false}`)
	words := []string{"give exactly one of: uid; org and slug", "give at least one of: title; tags", "slug needs org"}
	for _, f := range wordForms {
		out, problems := f.form(doc)
		if len(problems) > 0 {
			t.Errorf("%s: %v", f.name, problems)
			continue
		}
		var got struct {
			Description  string
			OneOf, AnyOf []any
		}
		if err := json.Unmarshal(out, &got); err != nil || got.OneOf != nil || got.AnyOf != nil ||
			!strings.Contains(got.Description, words[0]) || !strings.Contains(got.Description, words[1]) || !strings.Contains(got.Description, words[2]) {
			t.Errorf("%s wrote %s (%v)", f.name, out, err)
		}
	}
	if out, lost, err := forms.OllamaSafe(doc); err != nil || strings.Contains(string(out), "oneOf") || !strings.Contains(string(out), words[0]) || slices.ContainsFunc(lost, func(l string) bool { return strings.Contains(l, "oneOf") }) {
		t.Errorf("Ollama's safe form wrote %s, lost %v (%v)", out, lost, err)
	}
	if got := forms.RootWords(doc); !slices.Equal(got, words) {
		t.Errorf("RootWords: %q", got)
	}
	other := []byte(`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"required":["v"],"additionalProperties":false}`)
	if out, _, problems := forms.OpenAIStrict(other); len(problems) > 0 || !strings.Contains(string(out), `"anyOf"`) {
		t.Errorf("alternatives of types: %s %v", out, problems)
	}
}

// wordForms are the forms that say in words what they cannot hold: each
// returns its schema and the problems that keep it from being written.
var wordForms = []struct {
	name string
	form func([]byte) (json.RawMessage, []string)
}{
	{"OpenAI strict", func(d []byte) (json.RawMessage, []string) { out, _, p := forms.OpenAIStrict(d); return out, p }},
	{"Anthropic strict", func(d []byte) (json.RawMessage, []string) { out, _, p := forms.AnthropicStrict(d); return out, p }},
	{"Gemini parameters", func(d []byte) (json.RawMessage, []string) {
		out, _, err := forms.GeminiParameters(d)
		if err != nil {
			return nil, []string{err.Error()}
		}
		return out, nil
	}},
}

// A bound on a value written as text (a duration's, a decimal's) reaches
// a form that does not take it as words on the member.
func TestTextBoundsInWords(t *testing.T) {
	doc := []byte(`{"type":"object","properties":{"window":{"type":"string","description":"How far back.","formatMinimum":"1m","formatExclusiveMaximum":"168h"}},"required":["window"],"additionalProperties":false}`)
	for _, f := range wordForms {
		out, problems := f.form(doc)
		if len(problems) > 0 || strings.Contains(string(out), "formatMinimum") ||
			!strings.Contains(string(out), "at least 1m") || !strings.Contains(string(out), "less than 168h") {
			t.Errorf("%s wrote %s %v", f.name, out, problems)
		}
	}
}

// A tuple's items reach Gemini's parameters as words; the strict modes,
// which take no prefixItems, offer such a tool non-strict.
func TestTupleInForms(t *testing.T) {
	doc := []byte(`{"type":"object","properties":{"at":{"type":"array","description":"A reading.","prefixItems":[{"type":"number"},{"type":"string"}],"minItems":2,"maxItems":2}},"required":["at"],"additionalProperties":false}`)
	out, _, err := forms.GeminiParameters(doc)
	if err != nil || strings.Contains(string(out), "prefixItems") || !strings.Contains(string(out), "items in this order: number, string") {
		t.Errorf("Gemini wrote %s %v", out, err)
	}
	if _, _, problems := forms.OpenAIStrict(doc); len(problems) == 0 {
		t.Error("OpenAI's strict mode took prefixItems")
	}
	if _, _, problems := forms.AnthropicStrict(doc); len(problems) == 0 {
		t.Error("Anthropic's strict mode took prefixItems")
	}
}

// A member whose null is its own (a wire.Nullable) keeps it in every form
// that can say it; OpenAI's strict mode, where null means absent, cannot,
// and offers such a tool non-strict unless the member is required.
func TestNullApartFromAbsentInForms(t *testing.T) {
	doc := []byte(`{"type":"object","properties":{"type":{"type":["string","null"],"enum":["bug",null],"description":"Null clears it."},"flag":{"type":["boolean","null"]}},"required":["flag"],"additionalProperties":false}`)
	if _, _, problems := forms.OpenAIStrict(doc); len(problems) != 1 || !strings.Contains(problems[0], `"type" is optional and its null means something of its own`) {
		t.Errorf("OpenAI's strict mode: %v", problems)
	}
	required := []byte(strings.Replace(string(doc), `"required":["flag"]`, `"required":["flag","type"]`, 1))
	if out, nulls, problems := forms.OpenAIStrict(required); len(problems) > 0 || !strings.Contains(string(out), `"enum":["bug",null]`) ||
		string(nulls.Drop([]byte(`{"flag":null,"type":null}`), 1<<10, 8)) != `{"flag":null,"type":null}` {
		t.Errorf("OpenAI's strict mode, required: %s %v", out, problems)
	}
	if out, _, err := forms.GeminiParameters(doc); err != nil || !strings.Contains(string(out), `"type":{"type":"STRING","enum":["bug"],"description":"Null clears it.","nullable":true}`) {
		t.Errorf("Gemini wrote %s %v", out, err)
	}
	if out, _, problems := forms.AnthropicStrict(doc); len(problems) > 0 || !strings.Contains(string(out), `"type":["string","null"]`) || strings.Contains(string(out), `"required":["flag","type"]`) {
		t.Errorf("Anthropic's strict mode wrote %s %v", out, problems)
	}
}

// A string's reserved values (not over an enum or a const, the one not
// generated code checks) reach a form that lacks not as words, and the
// tool keeps strict mode; any other not is a problem of the strict forms.
func TestNotInWords(t *testing.T) {
	doc := []byte(`{"type":"object","properties":{"user":{"type":"string","description":"Who.","not":{"enum":["admin","root"]}},"tag":{"type":"string","not":{"const":"x\"y"}}},"required":["user","tag"],"additionalProperties":false}`)
	for _, f := range wordForms {
		out, problems := f.form(doc)
		if len(problems) > 0 || strings.Contains(string(out), `"not"`) ||
			!strings.Contains(string(out), `never \"admin\" or \"root\"`) || !strings.Contains(string(out), `never \"x\\\"y\"`) {
			t.Errorf("%s wrote %s %v", f.name, out, problems)
		}
	}
	other := []byte(`{"type":"object","properties":{"n":{"type":"string","not":{"minLength":3}}},"required":["n"],"additionalProperties":false}`)
	for _, strict := range []struct {
		name string
		form func(json.RawMessage) []string
	}{
		{"openai", forms.OpenAIStrictProblems},
		{"anthropic", func(d json.RawMessage) []string { _, _, p := forms.AnthropicStrict(d); return p }},
	} {
		if p := strict.form(other); len(p) == 0 || !strings.Contains(strings.Join(p, ";"), `"not"`) {
			t.Errorf("%s: another not: %v", strict.name, p)
		}
	}
}
