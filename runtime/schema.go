package runtime

import (
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keelgen/keel/internal/toolrules"
)

// compileSchema compiles one generated schema under a private URL, as
// keelgen checked it (toolrules.CompileSchema).
func compileSchema(name string, doc []byte) (*jsonschema.Schema, error) {
	return toolrules.CompileSchema(name, doc)
}
