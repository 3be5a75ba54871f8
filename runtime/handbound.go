package runtime

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemamodel"
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
	doc, err := schemamodel.Parse(input)
	if err != nil {
		return nil // compiling the schema reports it
	}
	var bad string
	doc.Walk(func(s *schemamodel.Schema, ptr jsontext.Pointer) {
		for _, kw := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
			if s.Number(kw) != "" && !integerOnly(s.Type) && bad == "" {
				bad = fmt.Sprintf("%s at %q", kw, string(ptr))
			}
		}
	})
	if bad != "" {
		return fmt.Errorf("the input schema has %s on a member that is not an integer: a tool bound by hand (runtime.Handle) "+
			"checks the number as written, but its handler gets it rounded to a float, which can be the bound itself; "+
			"generate the tool with keelgen (its readers check the rounded value), or use an inclusive bound or an integer", bad)
	}
	return nil
}

// integerOnly reports whether a schema's type admits only integers (and
// perhaps null).
func integerOnly(t schemamodel.Types) bool { return t.Has("integer") && !t.Has("number") }
