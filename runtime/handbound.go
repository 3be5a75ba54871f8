package runtime

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/go-json-experiment/json/jsontext"
)

// checkHandBound refuses, for a tool bound by hand (Handle), an input
// schema keyword whose check would be unsound there. The validator checks
// the number as written and json v2 then rounds it to the Go type, so an
// exclusive bound on a non-integer member passes values the handler
// receives as the bound itself (0.99999999999999999999 is 1 to a float64
// under exclusiveMaximum: 1; 1e-400 is 0 under exclusiveMinimum: 0).
// Generated readers check the rounded value instead; keelgen is the way to
// such a tool.
func checkHandBound(input []byte) error {
	var doc any
	if err := json.Unmarshal(input, &doc); err != nil {
		return nil // CheckSchema reports it
	}
	var bad string
	var walk func(v any, ptr jsontext.Pointer)
	walk = func(v any, ptr jsontext.Pointer) {
		switch v := v.(type) {
		case map[string]any:
			for _, kw := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
				if _, isNumber := v[kw].(float64); isNumber && !integerOnly(v["type"]) && bad == "" {
					bad = fmt.Sprintf("%s at %q", kw, string(ptr))
				}
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(v[k], ptr.AppendToken(k))
			}
		case []any:
			for i, item := range v {
				walk(item, ptr.AppendToken(fmt.Sprint(i)))
			}
		}
	}
	walk(doc, "")
	if bad != "" {
		return fmt.Errorf("the input schema has %s on a member that is not an integer: a tool bound by hand (runtime.Handle) "+
			"checks the number as written, but its handler gets it rounded to a float, which can be the bound itself; "+
			"generate the tool with keelgen (its readers check the rounded value), or use an inclusive bound or an integer", bad)
	}
	return nil
}

// integerOnly reports whether a schema's type admits only integers (and
// perhaps null).
func integerOnly(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "integer"
	case []any:
		return slices.Contains(t, any("integer")) && !slices.Contains(t, any("number"))
	}
	return false
}
