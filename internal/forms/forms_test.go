package forms_test

import (
	"encoding/json"
	"fmt"
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
