// Package resultjson is the one text every adapter gives a model for a
// tool's result: the ToolResult as JSON, so a failed result carries its
// stable code.
package resultjson

import (
	"encoding/json"

	"github.com/keelgen/keel/runtime"
)

// Content is what a model reads back for any result.
func Content(r runtime.ToolResult) string {
	b, err := json.Marshal(r)
	if err != nil { // unreachable: every field of a ToolResult encodes
		return `{"ok":false,"error":{"code":"tool_internal_error","message":"The result could not be encoded."}}`
	}
	return string(b)
}
